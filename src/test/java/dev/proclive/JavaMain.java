package dev.proclive;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The command line of a JVM that runs a test main on this test run's class path, for tests that need other processes. */
public final class JavaMain {

    private JavaMain() {
    }

    /** {@code prefix... java -cp CLASSPATH MAIN args...}: a short-lived JVM running {@code main}. */
    public static List<String> command(List<String> prefix, Class<?> main, String... args) {
        List<String> command = new ArrayList<>(prefix);
        command.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                main.getName()));
        command.addAll(List.of(args));
        return command;
    }
}
