package dev.proclive;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** The programs of this machine a test needs, looked up as a shell would: what a test skips without. */
public final class Tools {

    private Tools() {
    }

    /** Whether {@code tool} is an executable in a directory of {@code PATH}. */
    public static boolean onPath(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            if (Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Where {@code faketime} preloads its library from (what it sets {@code LD_PRELOAD} to), for a
     * test that steps a child's wall clock; skips the test, with its reason, where there is none.
     */
    public static String libfaketime() throws Exception {
        assumeTrue(onPath("faketime"), "faketime (libfaketime) is needed");
        Process p = new ProcessBuilder("faketime", "-f", "+0", "printenv", "LD_PRELOAD").start();
        String lib = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        p.waitFor();
        assumeTrue(lib.contains("libfaketime"), "faketime sets no LD_PRELOAD of libfaketime here: " + lib);
        return lib;
    }

    /**
     * {@code builder}, its process's wall clock read through {@code lib} (see {@link #libfaketime()})
     * from {@code offset} at every call: write {@code "+0"}, then {@code "-1h"} to step it back.
     */
    public static ProcessBuilder steppedClock(ProcessBuilder builder, String lib, Path offset) {
        builder.environment().put("LD_PRELOAD", lib);
        builder.environment().put("FAKETIME_TIMESTAMP_FILE", offset.toString());
        builder.environment().put("FAKETIME_NO_CACHE", "1");
        return builder;
    }
}
