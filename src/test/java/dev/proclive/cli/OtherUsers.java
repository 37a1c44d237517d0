package dev.proclive.cli;

import static dev.proclive.Tools.onPath;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.List;

/**
 * Commands run as other users, who exist only as numbers here ({@code setpriv} needs no account):
 * a test that uses them needs root, and skips with that reason without it.
 */
final class OtherUsers {

    private OtherUsers() {
    }

    /** Skips the test unless it runs as root with {@code setpriv} at hand. */
    static void needed() {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to run as other users (setpriv); runs in CI as root");
        assumeTrue(onPath("setpriv"), "setpriv (util-linux) is needed");
    }

    /**
     * {@code command} run as user {@code uid} with primary group {@code gid} and {@code group} beside
     * it, under umask 022 as most users have.
     */
    static List<String> as(int uid, int gid, int group, List<String> command) {
        List<String> all = new ArrayList<>(List.of("setpriv", "--reuid=" + uid, "--regid=" + gid, "--groups=" + group,
                "--", "sh", "-c", "umask 022; exec \"$@\"", "sh"));
        all.addAll(command);
        return all;
    }
}
