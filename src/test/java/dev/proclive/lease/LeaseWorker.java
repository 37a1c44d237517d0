package dev.proclive.lease;

import dev.proclive.Identity;
import dev.proclive.ProcLive;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A process that contends for a lease, for the multi-process tests. Holds the lease for itself.
 * <ul>
 *   <li>{@code race DIR NAME ROUNDS}: in each round, reads a line from its input (the test's
 *       start signal), acquires once and writes {@code DIR/result-R-PID}: {@code granted FENCE},
 *       {@code held} or {@code undecided}; then lives until its input ends.</li>
 *   <li>{@code exclusion DIR NAME GRANTS LOG}: until it was granted GRANTS times: acquire, and
 *       again at once when refused; when granted, append {@code enter FENCE PID} and
 *       {@code exit FENCE PID} to LOG, then release.</li>
 *   <li>{@code churn DIR NAME}: acquire, renew and release for ever (to be killed at any step).</li>
 *   <li>{@code spelled DIR NAME ELSEWHERE}: with DIR also reached as ELSEWHERE (a bind mount), gives NAME to a
 *       sleeper, waits for it through DIR for another, and meanwhile waits 0.5 s for the same one through a store
 *       over ELSEWHERE; then prints {@code tickets N}, the tickets left in the queue.</li>
 *   <li>{@code once DIR NAME}: acquire once and print {@code granted FENCE}, {@code held} or
 *       {@code undecided}.</li>
 *   <li>{@code launch DIR NAME STAGE}: a launcher to be SIGKILLed at a stage of a spawn: reserves,
 *       then {@code before-start} prints {@code reserved}; {@code before-handoff} starts
 *       {@code sleep 60} with the reservation in its environment and prints its pid;
 *       {@code grandchild} starts {@code sh} that starts {@code sleep 60} and exits, and prints the
 *       sleeper's pid; {@code after-handoff} spawns {@code sleep 60} and prints its pid. Then it
 *       waits to be killed.</li>
 * </ul>
 */
public final class LeaseWorker {

    private LeaseWorker() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[1]);
        String name = args[2];
        LeaseStore store = LeaseStore.open(dir);
        Identity self = ProcLive.current().orElseThrow();
        switch (args[0]) {
            case "race" -> {
                int rounds = Integer.parseInt(args[3]);
                java.io.BufferedReader in = new java.io.BufferedReader(
                        new java.io.InputStreamReader(System.in, StandardCharsets.US_ASCII));
                for (int r = 1; r <= rounds; r++) {
                    if (in.readLine() == null) {
                        return;
                    }
                    Acquisition a = store.acquire(name, self);
                    String result = a instanceof Acquisition.Granted g ? "granted " + g.lease().fence()
                            : a instanceof Acquisition.Held ? "held" : "undecided";
                    Path out = dir.resolve("result-" + r + "-" + self.pid());
                    Files.writeString(dir.resolve(out.getFileName() + ".tmp"), result);
                    Files.move(dir.resolve(out.getFileName() + ".tmp"), out);
                }
                // Stay alive until told: a winner that exited would be a DEAD holder, rightly taken over.
                while (in.readLine() != null) {
                    // the test's input ends when it is done
                }
            }
            case "exclusion" -> {
                int wanted = Integer.parseInt(args[3]);
                Path log = Path.of(args[4]);
                int grants = 0;
                while (grants < wanted) {
                    if (store.acquire(name, self) instanceof Acquisition.Granted g) {
                        long fence = g.lease().fence();
                        append(log, "enter " + fence + " " + self.pid() + "\n");
                        append(log, "exit " + fence + " " + self.pid() + "\n");
                        if (!g.lease().release()) {
                            append(log, "lost " + fence + " " + self.pid() + "\n");
                        }
                        grants++;
                    } else {
                        Thread.yield(); // refused: ask again, as a contender that does not wait would
                    }
                }
            }
            case "churn" -> {
                System.out.println("ready");
                System.out.flush();
                while (true) {
                    if (store.acquire(name, self) instanceof Acquisition.Granted g) {
                        g.lease().renew();
                        g.lease().release();
                    }
                }
            }
            case "launch" -> {
                String stage = args[3];
                if (stage.equals("after-handoff")) {
                    Acquisition.Started started = (Acquisition.Started) store.spawn(name, new ProcessBuilder("sleep", "60"));
                    System.out.println(started.process().pid());
                } else {
                    Lease reserved = ((Acquisition.Granted) store.reserve(name, self)).lease();
                    ProcessBuilder child = stage.equals("grandchild")
                            ? new ProcessBuilder("sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!")
                            : new ProcessBuilder("sleep", "60");
                    child.environment().put(LeaseStore.TOKEN_VARIABLE, reserved.token().orElseThrow());
                    switch (stage) {
                        case "before-start" -> System.out.println("reserved");
                        case "before-handoff" -> System.out.println(child.start().pid());
                        case "grandchild" -> {
                            Process sh = child.start();
                            String pid = new String(sh.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
                            sh.waitFor();
                            System.out.println(pid);
                        }
                        default -> throw new IllegalArgumentException(stage);
                    }
                }
                System.out.flush();
                System.in.read(); // holds until the test closes its input or kills it
            }
            case "spelled" -> { // ELSEWHERE: the same directory, reached through a bind mount
                Path elsewhere = Path.of(args[3]);
                Process holder = new ProcessBuilder("sleep", "60").start();
                Process next = new ProcessBuilder("sleep", "60").start();
                try (LeaseStore other = LeaseStore.open(elsewhere)) {
                    store.acquire(name, ProcLive.identify(holder.pid()).orElseThrow());
                    Identity waiter = ProcLive.identify(next.pid()).orElseThrow();
                    java.util.concurrent.CompletableFuture<Acquisition> first = java.util.concurrent.CompletableFuture
                            .supplyAsync(() -> {
                                try {
                                    return store.acquire(name, waiter, java.time.Duration.ofSeconds(60));
                                } catch (java.io.IOException e) {
                                    throw new java.io.UncheckedIOException(e);
                                }
                            });
                    Path queue = dir.resolve(name + ".queue");
                    while (!Files.exists(queue)) {
                        Thread.sleep(20);
                    }
                    other.acquire(name, waiter, java.time.Duration.ofMillis(500)); // held: ends at its deadline
                    System.out.println("tickets " + (Files.exists(queue) ? Files.readString(queue).lines().count() : 0));
                    first.cancel(true);
                } finally {
                    holder.destroyForcibly();
                    next.destroyForcibly();
                }
                System.exit(0); // the first wait's thread, if it still waits
            }
            case "once" -> {
                Acquisition a = store.acquire(name, self);
                System.out.println(a instanceof Acquisition.Granted g ? "granted " + g.lease().fence()
                        : a instanceof Acquisition.Held ? "held" : "undecided");
            }
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    private static void append(Path log, String line) throws Exception {
        Files.write(log, line.getBytes(StandardCharsets.US_ASCII), StandardOpenOption.CREATE,
                StandardOpenOption.APPEND, StandardOpenOption.WRITE);
    }
}
