package dev.proclive;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A JVM that watches processes, for the exit-watch tests that need a JVM of their own (a
 * descriptor limit, a PID namespace, {@code pidfd_open} refused under strace).
 * <ul>
 *   <li>{@code many N PID...}: N watches spread over the PIDs; prints {@code watching PIDFDS} (the
 *       pidfds it holds), then {@code done COMPLETED REASON...} once every watch completed (60 s at
 *       most), then {@code left PIDFDS}.</li>
 *   <li>{@code own}: starts {@code sleep 60}, watches it, prints {@code watching PIDFDS}, kills it and
 *       prints the verdict's reason once the watch completes.</li>
 * </ul>
 */
public final class ExitWatchWorker {

    private ExitWatchWorker() {
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "many" -> {
                int n = Integer.parseInt(args[1]);
                List<Identity> ids = new ArrayList<>();
                for (int i = 2; i < args.length; i++) {
                    ids.add(ProcLive.identify(Long.parseLong(args[i])).orElseThrow());
                }
                List<CompletableFuture<Verdict>> watches = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    watches.add(ProcLive.onExit(ids.get(i % ids.size())));
                }
                System.out.println("watching " + pidfds());
                System.out.flush();
                CompletableFuture.allOf(watches.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
                System.out.println("done " + watches.stream().filter(CompletableFuture::isDone).count() + " "
                        + watches.stream().map(w -> w.join().reason()).distinct().sorted().toList());
                try { // the watcher closes descriptors before completing: none should be left
                    Eventually.until("every pidfd closed", java.time.Duration.ofSeconds(2), () -> pidfds() == 0);
                } catch (AssertionError some) {
                    // said on the next line: the test asserts how many were left
                }
                System.out.println("left " + pidfds());
            }
            case "own" -> {
                Process p = new ProcessBuilder("sleep", "60").start();
                Identity id = ProcLive.identify(p.pid()).orElseThrow();
                CompletableFuture<Verdict> end = ProcLive.onExit(id);
                System.out.println("watching " + pidfds());
                System.out.flush();
                p.destroyForcibly();
                System.out.println(end.get(30, TimeUnit.SECONDS).reason());
            }
            case "exit-pending" -> {
                // a watch still pending at System.exit: another hook looks at the watching thread
                // once the JVM's hooks have had 300 ms (what HotSpot would wait for a native call)
                CompletableFuture<Verdict> end = ProcLive.onExit(ProcLive.identify(Long.parseLong(args[1])).orElseThrow());
                Thread watcher = Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.getName().equals("proclive-exit-watch")).findFirst().orElseThrow();
                Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                    try {
                        watcher.join(300);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    System.out.println((end.isDone() ? "done" : "pending") + " " + (watcher.isAlive() ? "alive" : "ended"));
                    System.out.flush();
                }));
                System.exit(0);
            }
            default -> throw new IllegalArgumentException(args[0]);
        }
        System.out.flush();
    }

    /** How many pidfds this process holds. */
    static long pidfds() throws IOException {
        long n = 0;
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : fds.toList()) {
                try {
                    if (Files.readSymbolicLink(fd).toString().contains("pidfd")) {
                        n++;
                    }
                } catch (IOException e) {
                    // closed meanwhile
                }
            }
        }
        return n;
    }
}
