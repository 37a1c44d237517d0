package dev.proclive;

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

    /** Where {@code faketime} preloads its library from: what it sets {@code LD_PRELOAD} to. */
    public static String libfaketime() throws Exception {
        Process p = new ProcessBuilder("faketime", "-f", "+0", "printenv", "LD_PRELOAD").start();
        String lib = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        p.waitFor();
        return lib;
    }
}
