package dev.proclive.bench;

import dev.proclive.Identity;
import dev.proclive.ProcLive;
import dev.proclive.lease.Acquisition;
import dev.proclive.lease.Lease;
import dev.proclive.lease.LeasePolicy;
import dev.proclive.lease.LeaseStore;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A lock-set history under faults, in the manner of Jepsen: worker JVMs contend for one lease (on a directory, or on a
 * one-member etcd this run starts), and each holder writes its fence to a fenced register (a file that refuses a fence
 * below the highest it took) a few times, checking {@link Lease#isValid()} before each write, then releases. Meanwhile
 * a nemesis stops workers (SIGSTOP for 0.5 to 2.5 TTLs, then SIGCONT), kills them (SIGKILL, a new one started), and on
 * etcd stops or kills the member (then starts it again on its data). Every event is logged with
 * {@link System#nanoTime()}, one clock for every process of the machine, and the history is checked:
 * <ul>
 *   <li><b>fences unique and rising</b>: no fence granted to two processes (its holder asking again keeps it), and no
 *       grant completed before another was asked for carries the higher fence;</li>
 *   <li><b>no stale write accepted</b>: no {@code isValid()} asked after a higher fence's grant had completed said
 *       true (the register's refusals of lower fences are counted: they are the fence doing its work);</li>
 *   <li><b>a live holder told before the next grant</b>: a holder that neither released nor was stopped or killed
 *       between its grant and the next one was told its lease was lost ({@link Lease#lost()}) before that next grant
 *       completed.</li>
 * </ul>
 * {@code bench.backends} ({@code directory,etcd}), {@code bench.workers} (5), {@code bench.seconds} (60) and
 * {@code bench.ttl} (3) set the run; {@code mvn -B -Pbench verify -Dbench.main=dev.proclive.bench.FencedHistory}, or
 * the classes and {@code java} directly as for {@link ManyLeases}. Written to {@code target/fenced-history.md} too;
 * the history of each backend to {@code target/fenced-history-BACKEND.log}.
 */
public final class FencedHistory {

    private static final String NAME = "fenced";

    private FencedHistory() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("worker")) {
            worker(args);
            return;
        }
        Path target = Path.of(args.length > 0 ? args[0] : "target");
        int workers = Integer.getInteger("bench.workers", 5);
        int seconds = Integer.getInteger("bench.seconds", 60);
        int ttl = Integer.getInteger("bench.ttl", 3);
        StringBuilder report = new StringBuilder(String.format("%s %s, %s, %d cores; %d workers, TTL %d s, %d s of faults%n%n",
                System.getProperty("java.vm.name"), System.getProperty("java.vm.version"), System.getProperty("os.name"),
                Runtime.getRuntime().availableProcessors(), workers, ttl, seconds));
        boolean clean = true;
        for (String backend : System.getProperty("bench.backends", "directory,etcd").split(",")) {
            Path run = Files.createTempDirectory("proclive-fenced-" + backend);
            Path history = target.resolve("fenced-history-" + backend + ".log");
            Files.createDirectories(target);
            Files.deleteIfExists(history);
            Etcd etcd = backend.equals("etcd") ? Etcd.start(run) : null;
            try {
                String where = etcd == null ? run.resolve("leases").toString() : etcd.url;
                new Nemesis(backend, where, run, history, workers, ttl, etcd).run(seconds);
            } finally {
                if (etcd != null) {
                    etcd.stop();
                }
            }
            Verdicts v = check(Files.readAllLines(history));
            report.append(v.describe(backend));
            clean &= v.clean();
        }
        System.out.print(report);
        Files.writeString(target.resolve("fenced-history.md"), report.toString(), StandardCharsets.UTF_8);
        if (!clean) {
            System.exit(1);
        }
    }

    // ---------------------------------------------------------------------------------------------- the worker

    /** {@code worker BACKEND WHERE TTL HISTORY REGISTER}: contends for the lease until killed. */
    private static void worker(String[] args) throws Exception {
        String backend = args[1];
        String where = args[2];
        Duration ttl = Duration.ofSeconds(Long.parseLong(args[3]));
        Path history = Path.of(args[4]);
        Path register = Path.of(args[5]);
        LeaseStore.Builder b = LeaseStore.builder().policy(LeasePolicy.builder().ttl(ttl).build());
        b = backend.equals("etcd") ? b.etcd(List.of(URI.create(where))).prefix("fenced/") : b.directory(Path.of(where));
        Identity self = ProcLive.current().orElseThrow();
        long pid = self.pid();
        Random random = ThreadLocalRandom.current();
        try (LeaseStore store = b.build()) {
            while (true) {
                long asked = System.nanoTime();
                Acquisition a;
                try {
                    a = store.acquire(NAME, self, ttl.multipliedBy(4));
                } catch (IOException e) {
                    log(history, "error", 0, pid, asked, System.nanoTime(), e.toString().replaceAll("\\s", "_"));
                    Thread.sleep(100);
                    continue;
                }
                if (!(a instanceof Acquisition.Granted granted)) {
                    continue;
                }
                Lease lease = granted.lease();
                long fence = lease.fence();
                log(history, "grant", fence, pid, asked, System.nanoTime(), "");
                lease.lost().thenAccept(why -> log(history, "lost", fence, pid, System.nanoTime(), System.nanoTime(),
                        why.why().name()));
                int writes = 3 + random.nextInt(8);
                for (int i = 0; i < writes; i++) {
                    long checked = System.nanoTime();
                    boolean valid;
                    try {
                        valid = lease.isValid();
                    } catch (IOException e) {
                        valid = false;
                    }
                    log(history, valid ? "valid" : "invalid", fence, pid, checked, System.nanoTime(), "");
                    if (!valid) {
                        break;
                    }
                    write(history, register, fence, pid);
                    Thread.sleep(50 + random.nextInt(250));
                }
                long releasing = System.nanoTime();
                try {
                    if (store.release(NAME, fence)) {
                        log(history, "release", fence, pid, releasing, System.nanoTime(), "");
                    }
                } catch (IOException e) {
                    log(history, "error", fence, pid, releasing, System.nanoTime(), e.toString().replaceAll("\\s", "_"));
                }
            }
        }
    }

    /** The fenced register: takes {@code fence} unless it is below the highest it took; logged under its lock. */
    private static void write(Path history, Path register, long fence, long pid) throws IOException {
        try (FileChannel c = FileChannel.open(register, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE); FileLock ignored = c.lock()) {
            long at = System.nanoTime();
            ByteBuffer b = ByteBuffer.allocate(32);
            c.read(b, 0);
            String text = new String(b.array(), 0, b.position(), StandardCharsets.US_ASCII).strip();
            long highest = text.isEmpty() ? 0 : Long.parseLong(text);
            boolean taken = fence >= highest;
            if (taken) {
                c.truncate(0);
                c.write(ByteBuffer.wrap(Long.toString(fence).getBytes(StandardCharsets.US_ASCII)), 0);
            }
            log(history, taken ? "write" : "refused", fence, pid, at, System.nanoTime(), "highest=" + highest);
        }
    }

    /** One line, appended at once: {@code EVENT FENCE PID INVOKED COMPLETED DETAIL}. */
    private static void log(Path history, String event, long fence, long pid, long invoked, long completed, String detail) {
        String line = event + " " + fence + " " + pid + " " + invoked + " " + completed + " " + detail + "\n";
        try (FileChannel c = FileChannel.open(history, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.APPEND)) {
            c.write(ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8)));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    // ---------------------------------------------------------------------------------------------- the nemesis

    /** The workers and the faults done to them (and to etcd), for {@code seconds}. */
    private static final class Nemesis {
        private final String backend;
        private final String where;
        private final Path run;
        private final Path history;
        private final int ttl;
        private final Etcd etcd;
        private final List<Process> workers = new ArrayList<>();
        private final Set<Long> stopped = ConcurrentHashMap.newKeySet();
        private final ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
        private final Random random = new Random();

        Nemesis(String backend, String where, Path run, Path history, int workers, int ttl, Etcd etcd) throws IOException {
            this.backend = backend;
            this.where = where;
            this.run = run;
            this.history = history;
            this.ttl = ttl;
            this.etcd = etcd;
            for (int i = 0; i < workers; i++) {
                this.workers.add(start());
            }
        }

        private Process start() throws IOException {
            List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                    System.getProperty("java.class.path"), FencedHistory.class.getName(), "worker", backend, where,
                    Integer.toString(ttl), history.toString(), run.resolve("register").toString());
            return new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(run.resolve("workers.out").toFile())).start();
        }

        void run(int seconds) throws Exception {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            try {
                while (System.nanoTime() < end) {
                    Thread.sleep(500 + random.nextInt(1500));
                    int pick = random.nextInt(10);
                    Process w = random.nextInt(5) < 3 ? holder().orElse(null) : null; // faults find the holder
                    w = w != null ? w : workers.get(random.nextInt(workers.size()));
                    if (pick < 5) {
                        pause(w.pid(), "worker");
                    } else if (pick < 8) {
                        kill(w);
                    } else if (etcd != null && pick == 8) {
                        pause(etcd.process.pid(), "etcd");
                    } else if (etcd != null) {
                        long at = System.nanoTime();
                        etcd.restart(() -> log(history, "etcd-killed", 0, etcd.process.pid(), at, System.nanoTime(), ""));
                    }
                }
            } finally { // the workers killed first: one let go on would take over from one killed after it
                later.shutdownNow();
                for (Process w : workers) {
                    long at = System.nanoTime();
                    w.destroyForcibly();
                    w.waitFor(10, TimeUnit.SECONDS);
                    log(history, "killed", 0, w.pid(), at, System.nanoTime(), "");
                }
                for (Long pid : stopped) {
                    signal(pid, "CONT");
                }
            }
        }

        /** The worker that logged the last grant, if it is one of those running. */
        private java.util.Optional<Process> holder() throws IOException {
            List<String> lines = Files.exists(history) ? Files.readAllLines(history) : List.of(); // none logged yet
            for (int i = lines.size() - 1; i >= 0; i--) {
                if (lines.get(i).startsWith("grant ")) {
                    long pid = Event.parse(lines.get(i)).pid();
                    return workers.stream().filter(w -> w.pid() == pid).findFirst();
                }
            }
            return java.util.Optional.empty();
        }

        private void pause(long pid, String what) throws Exception {
            if (!stopped.add(pid)) {
                return;
            }
            long pauseMillis = (long) (ttl * 1000L * (0.5 + 2 * random.nextDouble()));
            long at = System.nanoTime();
            signal(pid, "STOP");
            log(history, "stop-" + what, 0, pid, at, System.nanoTime(), pauseMillis + "ms");
            later.schedule(() -> {
                long c = System.nanoTime();
                signal(pid, "CONT");
                stopped.remove(pid);
                log(history, "cont-" + what, 0, pid, c, System.nanoTime(), "");
                return null;
            }, pauseMillis, TimeUnit.MILLISECONDS);
        }

        private void kill(Process w) throws Exception {
            if (stopped.contains(w.pid())) {
                return; // its SIGCONT is due: a new process may take its pid meanwhile
            }
            long at = System.nanoTime();
            w.destroyForcibly();
            w.waitFor(10, TimeUnit.SECONDS);
            log(history, "killed", 0, w.pid(), at, System.nanoTime(), "");
            workers.set(workers.indexOf(w), start());
        }
    }

    private static void signal(long pid, String signal) throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start().waitFor();
    }

    /** A one-member etcd on its own ports, its data kept across a kill. */
    private static final class Etcd {
        final String url;
        private final List<String> command;
        private final Path log;
        volatile Process process;

        private Etcd(Path run) throws IOException {
            int client = EtcdBench.freePort();
            int peer = EtcdBench.freePort();
            url = "http://127.0.0.1:" + client;
            command = List.of("etcd", "--name", "fenced", "--data-dir", run.resolve("etcd").toString(),
                    "--listen-client-urls", url, "--advertise-client-urls", url,
                    "--listen-peer-urls", "http://127.0.0.1:" + peer, "--initial-advertise-peer-urls",
                    "http://127.0.0.1:" + peer, "--initial-cluster", "fenced=http://127.0.0.1:" + peer);
            log = run.resolve("etcd.log");
        }

        static Etcd start(Path run) throws Exception {
            Etcd e = new Etcd(run);
            e.process = e.launch();
            return e;
        }

        private Process launch() throws Exception {
            Process p = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            EtcdBench.awaitUp(URI.create(url));
            return p;
        }

        void restart(Runnable killed) throws Exception {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
            killed.run();
            Thread.sleep(500);
            process = launch();
        }

        void stop() throws InterruptedException, IOException {
            signal(process.pid(), "CONT");
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }

    // ---------------------------------------------------------------------------------------------- the check

    private record Event(String kind, long fence, long pid, long invoked, long completed, String detail) {
        static Event parse(String line) {
            String[] f = line.split(" ", -1);
            return new Event(f[0], Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]),
                    Long.parseLong(f[4]), f.length > 5 ? f[5] : "");
        }
    }

    /** What the history showed. */
    record Verdicts(Map<String, Integer> counts, List<String> twice, List<String> notRising, List<String> staleValid,
                    List<String> untold, int takeovers, int excused) {
        boolean clean() {
            return twice.isEmpty() && notRising.isEmpty() && staleValid.isEmpty() && untold.isEmpty();
        }

        String describe(String backend) {
            StringBuilder s = new StringBuilder("## " + backend + "\n\n" + counts + "\n\n");
            s.append(String.format("| check | result |%n|---|---|%n"));
            s.append(row("fences unique (one process a fence)", twice));
            s.append(row("fences rising (no grant completed before another was asked carries the higher fence)", notRising));
            s.append(row("no isValid() true after a higher fence's grant completed", staleValid));
            s.append(row("a live holder told before the next grant (" + takeovers + " takeovers, " + excused
                    + " of them excused: their holder was stopped or killed)", untold));
            return s.append('\n').toString();
        }

        private static String row(String what, List<String> bad) {
            return "| " + what + " | " + (bad.isEmpty() ? "held" : "**" + bad.size() + " broken**: "
                    + String.join("; ", bad.subList(0, Math.min(5, bad.size())))) + " |\n";
        }
    }

    static Verdicts check(List<String> lines) {
        List<Event> events = lines.stream().filter(l -> !l.isBlank()).map(Event::parse).toList();
        Map<String, Integer> counts = new TreeMap<>();
        events.forEach(e -> counts.merge(e.kind(), 1, Integer::sum));
        Map<Long, Event> grants = new TreeMap<>();
        List<String> twice = new ArrayList<>();
        for (Event e : events) {
            Event before = e.kind().equals("grant") ? grants.put(e.fence(), e) : null;
            if (before != null && before.pid() != e.pid()) { // its own holder asking again keeps its fence
                twice.add("fence " + e.fence() + " to pid " + before.pid() + " and pid " + e.pid());
            }
        }
        List<String> notRising = new ArrayList<>();
        List<Event> byFence = new ArrayList<>(grants.values());
        for (Event high : byFence) {
            for (Event low : byFence) {
                if (high.fence() > low.fence() && high.completed() < low.invoked()) {
                    notRising.add("fence " + high.fence() + " granted before fence " + low.fence() + " was asked");
                }
            }
        }
        List<String> staleValid = new ArrayList<>();
        for (Event e : events) {
            if (e.kind().equals("valid")) {
                grants.values().stream().filter(g -> g.fence() > e.fence() && g.completed() < e.invoked()).findFirst()
                        .ifPresent(g -> staleValid.add("fence " + e.fence() + " (pid " + e.pid() + ") valid "
                                + (e.invoked() - g.completed()) / 1_000_000 + " ms after fence " + g.fence() + " was granted"));
            }
        }
        // Takeovers: a grant whose predecessor's holder did not release it.
        Map<Long, Event> released = new HashMap<>();
        Map<Long, List<Event>> lost = new HashMap<>();
        for (Event e : events) {
            if (e.kind().equals("release")) {
                released.put(e.fence(), e);
            } else if (e.kind().equals("lost")) {
                lost.computeIfAbsent(e.fence(), f -> new ArrayList<>()).add(e);
            }
        }
        List<String> untold = new ArrayList<>();
        int excused = 0;
        int takeovers = 0;
        for (int i = 1; i < byFence.size(); i++) {
            Event before = byFence.get(i - 1);
            Event next = byFence.get(i);
            if (released.containsKey(before.fence())) {
                continue;
            }
            takeovers++;
            if (faulted(events, before.pid(), before.completed(), next.completed())) {
                excused++;
                continue;
            }
            // told of the grant as it was last granted (its holder may have asked again, at the same fence)
            Event told = lost.getOrDefault(before.fence(), List.of()).stream()
                    .filter(l -> l.completed() > before.completed()).findFirst().orElse(null);
            if (told == null || told.completed() > next.completed()) {
                untold.add("fence " + before.fence() + " (pid " + before.pid() + ") "
                        + (told == null ? "never told" : "told " + (told.completed() - next.completed()) / 1_000_000
                        + " ms after") + " fence " + next.fence() + " was granted");
            }
        }
        return new Verdicts(counts, twice, notRising, staleValid, untold, takeovers, excused);
    }

    /** Whether {@code pid} was stopped or killed at any time from {@code from} to {@code to}, or stopped before. */
    private static boolean faulted(List<Event> events, long pid, long from, long to) {
        boolean stoppedAtFrom = false;
        for (Event e : events) {
            if (e.pid() != pid) {
                continue;
            }
            if (e.kind().equals("stop-worker") && e.invoked() <= from) {
                stoppedAtFrom = true;
            } else if (e.kind().equals("cont-worker") && e.completed() <= from) {
                stoppedAtFrom = false;
            } else if ((e.kind().equals("stop-worker") || e.kind().equals("killed")) && e.invoked() > from && e.invoked() < to) {
                return true;
            }
        }
        return stoppedAtFrom;
    }
}
