package dev.proclive.cli;

import dev.proclive.Identity;
import dev.proclive.OwnerResolver;
import dev.proclive.ProcLive;
import dev.proclive.Reason;
import dev.proclive.Verdict;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.concurrent.TimeUnit;

/** {@code proclive demo}: the whole story told with real processes, for a person reading along. */
final class Demo implements Command {

    private PrintStream out;

    @Override
    public int run(List<String> args, Io io) {
        if (!args.isEmpty()) {
            throw new Options.Usage("demo takes no arguments");
        }
        out = io.out();
        out.println("proclive: is that exact process still alive?");
        out.println("An identity is a pid plus the moment that process started, the boot, the host");
        out.println("and the PID namespace. A later check tells ALIVE, DEAD or UNKNOWN, with why.");
        owner();
        childKilled();
        zombie();
        reusedPid();
        otherHost();
        out.println();
        out.println("UNKNOWN is an answer too: when proclive cannot prove either, fall back to a timeout.");
        return 0;
    }

    private void owner() {
        section("1. The owner of this command: its first ancestor that is not a shell or a launcher");
        List<OwnerResolver.Step> steps = OwnerResolver.builder().build().trace();
        OwnerResolver.Step last = steps.get(steps.size() - 1);
        String skipped = steps.stream().filter(s -> s.outcome() == OwnerResolver.Step.Outcome.SKIPPED)
                .map(OwnerResolver.Step::name).collect(Collectors.joining(", "));
        say("why: " + (skipped.isEmpty() ? "" : "skipped " + skipped + "; then ")
                + (last.outcome() == OwnerResolver.Step.Outcome.OWNER
                        ? last.name() + " (pid " + last.pid() + ") is the owner: " : "stopped at pid " + last.pid() + ": ")
                + last.why() + " (proclive owner --trace tells each step)");
        Optional<Identity> owner = last.owner();
        if (owner.isEmpty()) {
            say("no owner could be determined here: the walk's last step, above, says why");
            return;
        }
        say("recorded: " + toJson(owner.get()));
        verdict("check now", ProcLive.explain(owner.get()));
    }

    private void childKilled() {
        section("2. A child process, recorded, then killed");
        Process child;
        try {
            child = new ProcessBuilder("sleep", "60").start();
        } catch (IOException e) {
            say("cannot start `sleep 60`: " + e.getMessage());
            return;
        }
        try {
            Optional<Identity> id = ProcLive.identify(child.pid());
            if (id.isEmpty()) {
                say("started `sleep 60` as pid " + child.pid() + ", but it cannot be identified " + whyNot(child.pid()));
                return;
            }
            say("started `sleep 60`: " + toJson(id.get()));
            verdict("while it runs", ProcLive.explain(id.get()));
            child.destroyForcibly();
            child.waitFor(10, TimeUnit.SECONDS);
            verdict("killed and reaped", ProcLive.explain(id.get()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            child.destroyForcibly();
        }
    }

    private void zombie() {
        section("3. A zombie: a child that exited but whose parent never reaped it");
        Process parent;
        try {
            // sh starts a short sleep, prints its pid, then becomes a `sleep 30` that never waits.
            parent = new ProcessBuilder("sh", "-c", "sleep 1 & echo $!; exec sleep 30").start();
        } catch (IOException e) {
            say("cannot start sh: " + e.getMessage());
            return;
        }
        try (BufferedReader lines = new BufferedReader(
                new InputStreamReader(parent.getInputStream(), StandardCharsets.UTF_8))) {
            long pid = Long.parseLong(lines.readLine().trim());
            Optional<Identity> id = ProcLive.identify(pid);
            for (int i = 0; i < 20 && id.isPresent() && !id.get().name().equals("sleep"); i++) {
                Thread.sleep(10); // the forked shell has not exec'd sleep yet
                id = ProcLive.identify(pid);
            }
            if (id.isEmpty()) {
                say("the child, pid " + pid + ", cannot be identified " + whyNot(pid));
                return;
            }
            say("recorded the child while it runs: " + toJson(id.get()));
            Verdict verdict = ProcLive.explain(id.get());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (verdict.reason() == Reason.MATCHED && System.nanoTime() < deadline) {
                Thread.sleep(50);
                verdict = ProcLive.explain(id.get());
            }
            verdict("after it exits", verdict);
            say("(a PID check alone, like kill(pid, 0), would still call it alive)");
        } catch (IOException | NumberFormatException | NullPointerException e) {
            say("could not read the child's pid: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            parent.destroyForcibly();
        }
    }

    private void reusedPid() {
        section("4. A reused PID: the pid is running, but it is not the process that was recorded");
        String simulated = realReuse();
        if (simulated.isEmpty()) {
            return;
        }
        Optional<Identity> self = ProcLive.current();
        if (self.isEmpty()) {
            say("this process cannot be identified " + whyNot(ProcessHandle.current().pid()));
            return;
        }
        Identity now = self.get();
        Identity earlier = new Identity(now.pid(), earlierStart(now.start()), now.boot(), now.host(),
                now.name(), now.pidns(), now.machine());
        say("SIMULATED (" + simulated + "): this JVM is pid " + now.pid() + ", started at " + now.start()
                + "; an identity as if recorded for an older process with the same pid:");
        say("  " + toJson(earlier));
        verdict("check", ProcLive.explain(earlier));
    }

    /**
     * Reuses a PID for real where it can: as root, in a fresh PID namespace (so no other process
     * competes for pids), a sleeper is recorded and killed, {@code ns_last_pid} is set so that the
     * next process takes its pid, and the old identity is checked against the new process.
     *
     * @return empty when it was shown; else why it could not be, for the simulated version
     */
    private String realReuse() {
        String jar = ownJar();
        if (dev.proclive.platform.Platform.os() != dev.proclive.platform.Platform.Os.LINUX) {
            return "a real reuse needs Linux PID namespaces";
        }
        if (!"root".equals(System.getProperty("user.name"))) {
            return "a real reuse needs root, to make a PID namespace and write ns_last_pid";
        }
        if (jar.isEmpty()) {
            return "a real reuse runs this jar again, and this demo does not run from a jar";
        }
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cli = "'" + javaBin + "' -XX:-UsePerfData -jar '" + jar + "'";
        String script = String.join("\n",
                "sleep 60 & P=$!",
                "ID=$(" + cli + " identify $P) || exit 10",
                "kill $P; wait $P",
                "echo $((P - 1)) > /proc/sys/kernel/ns_last_pid || exit 11",
                "sleep 60 & Q=$!",
                "echo \"$P $Q $ID\"",
                cli + " check \"$ID\"",
                "kill $Q");
        try {
            Process p = new ProcessBuilder("unshare", "--pid", "--fork", "--mount-proc", "sh", "-c", script)
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            List<String> lines = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().toList();
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0 || lines.size() != 2) {
                p.destroyForcibly();
                return "the PID namespace could not be set up here";
            }
            String[] reuse = lines.get(0).split(" ", 3);
            if (!reuse[0].equals(reuse[1])) {
                return "another process took the pid first";
            }
            say("REAL, in a fresh PID namespace: recorded `sleep 60` as pid " + reuse[0] + ": " + reuse[2]);
            say("killed it and made the next process take the same pid: a new `sleep 60` is pid " + reuse[1]);
            say(String.format("%-18s -> %s (%s): the pid now runs a process that started at another time",
                    "check the old one", field(lines.get(1), "liveness"), field(lines.get(1), "reason")));
            return "";
        } catch (IOException e) {
            return "unshare(1) could not be run: " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    /** The jar this class was loaded from, or empty. */
    private static String ownJar() {
        try {
            Path p = Path.of(Demo.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return p.toString().endsWith(".jar") && !p.toString().contains("'") ? p.toString() : "";
        } catch (Exception e) {
            return "";
        }
    }

    private void otherHost() {
        section("5. An identity recorded on another machine");
        Identity elsewhere = new Identity(1, "1", "", "some-other-host", "init", "");
        say(toJson(elsewhere));
        verdict("check", ProcLive.explain(elsewhere));
    }

    /** A start fingerprint one unit earlier, in the same format. */
    private static String earlierStart(String start) {
        try {
            return Long.toString(Long.parseLong(start) - 1);
        } catch (NumberFormatException e) {
            return "0" + start;
        }
    }

    /** What a check of {@code pid} itself says: why it could not be identified. */
    private static String whyNot(long pid) {
        Verdict self = ProcLive.explain(new Identity(pid, "", "", "", "", ""));
        return "(" + self.reason().json() + (self.detail().isEmpty() ? "" : ": " + self.detail()) + ")";
    }

    private void section(String title) {
        out.println();
        out.println(title);
    }

    private void say(String line) {
        out.println("   " + line);
    }

    private void verdict(String when, Verdict v) {
        say(String.format("%-18s -> %s", when, v));
    }

    private static String toJson(Identity id) {
        return IdentityJson.write(id);
    }

    /** A word field of the verdict line {@code check} prints, such as {@code "liveness":"dead"}; "?" if absent. */
    private static String field(String verdictLine, String name) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"" + name + "\":\"([a-z_]+)\"").matcher(verdictLine);
        return m.find() ? m.group(1) : "?";
    }
}
