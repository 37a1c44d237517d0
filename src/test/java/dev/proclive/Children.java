package dev.proclive;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The real processes a live test starts, and the JUnit extension that ends them: registered with
 * {@code @RegisterExtension final Children children = new Children();}, everything started through
 * it (and every descendant) is killed after each test, as Go's {@code t.Cleanup} would.
 */
public final class Children implements org.junit.jupiter.api.extension.AfterEachCallback {

    private final List<Process> started = new ArrayList<>();

    @Override
    public void afterEach(org.junit.jupiter.api.extension.ExtensionContext context) throws InterruptedException {
        killAll();
    }

    /** A {@code sleep 300}, ended after the test: the one sleeper of the test kit. */
    public Process sleeper() throws IOException {
        return start("sleep", "300");
    }

    /** The identity of a new {@link #sleeper()}: a live holder for a lease. */
    public Identity sleeping() throws IOException {
        return ProcLive.identify(sleeper().pid()).orElseThrow();
    }

    /**
     * {@code p}, a process the test started otherwise (its own environment or redirects): ended
     * after the test, with its descendants, as every process started here is.
     */
    public synchronized Process adopt(Process p) {
        started.add(p);
        return p;
    }

    public Process start(String... command) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("LC_ALL", "C");
        Process p = builder.start();
        synchronized (this) {
            started.add(p);
        }
        return p;
    }

    /**
     * Starts a shell that forks a {@code sleep seconds} child, prints its pid, then becomes a
     * {@code sleep} that never reaps it: once the child exits it is a real zombie. A child that
     * ends before the shell has become that {@code sleep} may be reaped by the shell (a busy
     * machine): give it a few tenths of a second at least.
     *
     * @return the child's pid
     */
    public long zombieToBe(String seconds) throws IOException {
        Process parent = start("sh", "-c", "sleep " + seconds + " & echo $!; exec sleep 60");
        BufferedReader out = new BufferedReader(new InputStreamReader(parent.getInputStream(), StandardCharsets.UTF_8));
        return Long.parseLong(out.readLine().trim());
    }

    /** Explains {@code id} until {@code done} holds or ten seconds pass; the last verdict. */
    public static Verdict await(Identity id, Predicate<Verdict> done) throws InterruptedException {
        try {
            return Eventually.until("the verdict on pid " + id.pid(), java.time.Duration.ofSeconds(10),
                    () -> ProcLive.explain(id), done);
        } catch (AssertionError notYet) {
            return ProcLive.explain(id); // the caller asserts what it expected of it
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    public synchronized void killAll() throws InterruptedException {
        for (Process p : started) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        started.clear();
    }
}
