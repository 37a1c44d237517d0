package dev.proclive.lease;

import dev.proclive.Eventually;
import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Children;
import dev.proclive.Identity;
import dev.proclive.ProcLive;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * Leases contended for by real processes: races for a dead holder's lease, mutual exclusion over
 * thousands of grants, and writers killed at any step.
 */
@EnabledOnOs({OS.LINUX, OS.MAC})
class LeaseRaceIT {

    @TempDir
    Path dir;
    final Children children = new Children();
    final List<Process> workers = new ArrayList<>();
    /** Closed after the test: a store that keeps grants writes its session file until it is closed. */
    final List<LeaseStore> stores = new ArrayList<>();

    @AfterEach
    void stop() throws InterruptedException {
        stores.forEach(LeaseStore::close);
        for (Process p : workers) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        children.killAll();
    }

    private LeaseStore opened(LeaseStore store) {
        stores.add(store);
        return store;
    }

    private Process worker(String... args) throws Exception {
        Process p = new ProcessBuilder(dev.proclive.JavaMain.command(List.of(), LeaseWorker.class, args)).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        workers.add(p);
        return p;
    }

    /** Gives the lease to a sleeper, then kills it: a lease whose holder is DEAD. */
    private void leaveWithADeadHolder(LeaseStore store) throws Exception {
        store.breakLease("build");
        Process sleeper = children.start("sleep", "60");
        Identity holder = ProcLive.identify(sleeper.pid()).orElseThrow();
        assertThat(store.acquire("build", holder)).isInstanceOf(Acquisition.Granted.class);
        sleeper.destroyForcibly();
        assertThat(sleeper.waitFor(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void exactlyOneOfManyTakersGetsADeadHoldersLease() throws Exception {
        int processes = 6;
        int rounds = 15;
        Path leases = dir.resolve("leases");
        LeaseStore store = opened(LeaseStore.open(leases));
        for (int i = 0; i < processes; i++) {
            worker("race", leases.toString(), "build", Integer.toString(rounds));
        }
        for (int r = 1; r <= rounds; r++) {
            leaveWithADeadHolder(store);
            long fenceBefore = store.read("build").orElseThrow().fence();
            for (Process w : workers) { // each reads its start from its input, all within microseconds
                w.getOutputStream().write('\n');
                w.getOutputStream().flush();
            }
            List<String> results = awaitResults(leases, r, processes);
            assertThat(results).as("round %d", r).filteredOn(s -> s.startsWith("granted")).hasSize(1)
                    .containsExactly("granted " + (fenceBefore + 1));
            assertThat(results).as("round %d", r).filteredOn(s -> s.equals("held")).hasSize(processes - 1);
        }
        for (Process w : workers) {
            w.getOutputStream().close();
        }
        System.out.println("lease race: " + rounds + " rounds x " + processes + " processes, one grant each round");
    }

    private static List<String> awaitResults(Path leases, int round, int processes) throws Exception {
        List<Path> files = Eventually.until("results of round " + round, java.time.Duration.ofSeconds(60), () -> {
            try (Stream<Path> s = Files.list(leases)) {
                return s.filter(p -> p.getFileName().toString().matches("result-" + round + "-[0-9]+")).toList();
            }
        }, found -> found.size() == processes);
        List<String> results = new ArrayList<>();
        for (Path f : files) {
            results.add(Files.readString(f));
        }
        return results;
    }

    @Test
    void noTwoProcessesEverHoldItAtOnceOverThousandsOfGrants() throws Exception {
        int processes = 4;
        int grantsEach = 500;
        Path leases = dir.resolve("leases");
        Path log = dir.resolve("log");
        for (int i = 0; i < processes; i++) {
            worker("exclusion", leases.toString(), "build", Integer.toString(grantsEach), log.toString());
        }
        for (Process p : workers) {
            assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).isZero();
        }
        List<String> lines = Files.readAllLines(log);
        assertThat(lines).hasSize(processes * grantsEach * 2);
        long lastFence = 0;
        int violations = 0;
        Map<String, Integer> perProcess = new HashMap<>();
        for (int i = 0; i < lines.size(); i += 2) {
            String[] enter = lines.get(i).split(" ");
            String[] exit = lines.get(i + 1).split(" ");
            boolean ok = enter[0].equals("enter") && exit[0].equals("exit") && enter[1].equals(exit[1])
                    && enter[2].equals(exit[2]) && Long.parseLong(enter[1]) > lastFence;
            if (!ok) {
                violations++;
            }
            lastFence = Long.parseLong(enter[1]);
            perProcess.merge(enter[2], 1, Integer::sum);
        }
        assertThat(violations).as("overlapping or out-of-order grants").isZero();
        assertThat(perProcess).hasSize(processes).allSatisfy((pid, n) -> assertThat(n).isEqualTo(grantsEach));
        System.out.println("lease exclusion: " + processes + " processes, " + processes * grantsEach
                + " grants, violations: " + violations + ", last fence " + lastFence);
    }

    @Test
    void aWriterKilledAtAnyStepLeavesARecordThatParses() throws Exception {
        Path leases = dir.resolve("leases");
        LeaseStore store = opened(LeaseStore.open(leases));
        Random random = new Random(42);
        int kills = 25;
        for (int i = 0; i < kills; i++) {
            Process p = worker("churn", leases.toString(), "build");
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            assertThat(out.readLine()).isEqualTo("ready");
            Thread.sleep(random.nextInt(40)); // time itself is the test: killed at a random moment of its work
            p.destroyForcibly(); // SIGKILL, wherever it is
            assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
            if (Files.exists(leases.resolve("build.lease"))) {
                assertThat(store.read("build")).as("after kill %d", i).isPresent();
            }
        }
        // The next writer removes what the killed ones left half-written.
        Process sleeper = children.start("sleep", "60");
        Identity holder = ProcLive.identify(sleeper.pid()).orElseThrow();
        store.breakLease("build");
        assertThat(store.acquire("build", holder)).isInstanceOf(Acquisition.Granted.class);
        try (Stream<Path> files = Files.list(leases)) {
            assertThat(files.map(f -> f.getFileName().toString())).noneMatch(n -> n.endsWith(".tmp"));
        }
    }
}
