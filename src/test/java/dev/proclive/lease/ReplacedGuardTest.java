package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static dev.proclive.Tools.onPath;

import dev.proclive.Children;
import dev.proclive.Eventually;
import dev.proclive.Identity;
import dev.proclive.posix.Flock;
import dev.proclive.spi.internal.FileLocker;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * A guard replaced under its lock (a file renamed over it) excludes as the old one did: a locker
 * that opened the old one and waited locks the one in its place, and a descriptor to the old one —
 * a reader's, opened while an older version left the guard 0644 — holds no writer out once the
 * store replaced it.
 */
@EnabledOnOs(OS.LINUX)
class ReplacedGuardTest {

    @TempDir
    Path tmp;
    final Children children = new Children();
    final List<Process> started = new ArrayList<>();

    @AfterEach
    void stop() throws InterruptedException {
        for (Process p : started) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        children.killAll();
    }

    private static boolean aLockWaiterRuns() {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals("proclive-lock-wait") && t.isAlive());
    }

    @Test
    void aLockerThatWaitedOnAFileReplacedMeanwhileLocksTheOneInItsPlace() throws Exception {
        Path guard = Files.writeString(tmp.resolve("build.guard"), "7");
        Flock flock = new Flock();
        FileLocker.Lock first = flock.lock(guard, Duration.ofSeconds(5));
        assumeTrue(!aLockWaiterRuns(), "no other lock waiter in this JVM");
        CompletableFuture<FileLocker.Lock> second = CompletableFuture.supplyAsync(() -> {
            try {
                return flock.lock(guard, Eventually.scaled(Duration.ofSeconds(20)));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        Eventually.until("the second locker opened the guard and waits for its lock", Duration.ofSeconds(5),
                ReplacedGuardTest::aLockWaiterRuns);
        Path fresh = Files.writeString(tmp.resolve(".fresh.tmp"), "7");
        Files.move(fresh, guard, StandardCopyOption.ATOMIC_MOVE); // replaced while the first holds the old one's lock
        first.close();

        try (FileLocker.Lock held = second.get(Eventually.scaled(Duration.ofSeconds(20)).toMillis(), TimeUnit.MILLISECONDS)) {
            assertThatThrownBy(() -> flock.lock(guard, Duration.ZERO)).as("the guard in place is the second locker's")
                    .isInstanceOf(FileLocker.Busy.class);
        }
        flock.lock(guard, Duration.ZERO).close();
    }

    @Test
    void theLocksFileIsTheOneLockedThoughAnotherWasRenamedToItsName() throws Exception {
        Path guard = Files.writeString(tmp.resolve("build.guard"), "7");
        try (FileLocker.Lock held = new Flock().lock(guard, Duration.ofSeconds(5))) {
            Path planted = Files.writeString(tmp.resolve(".planted"), "planted");
            Files.move(planted, guard, StandardCopyOption.ATOMIC_MOVE);
            assertThat(held.file()).as("/proc/self/fd is there").isPresent();
            assertThat(Files.readString(held.file().get())).isEqualTo("7");
            assertThat(Files.readString(guard)).isEqualTo("planted");
        }
    }

    @Test
    void aDescriptorToAGuardAnOlderVersionLeft0644HoldsNoWriterOutOnceItsStoreReplacedIt() throws Exception {
        assumeTrue(onPath("flock"), "flock (util-linux) is needed");
        Path dir = Files.createDirectory(tmp.resolve("leases"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x")); // others may read
        try (LeaseStore store = LeaseStore.builder().directory(dir).build()) {
            Identity holder = children.sleeping();
            Acquisition a = store.acquire("build", holder);
            assertThat(a).isInstanceOf(Acquisition.Granted.class);
            assertThat(((Acquisition.Granted) a).lease().release()).isTrue();
            Path guard = dir.resolve("build.guard");
            Files.setPosixFilePermissions(guard, PosixFilePermissions.fromString("rw-r--r--")); // as an older version left it
            Object old = Files.getAttribute(guard, "unix:ino", LinkOption.NOFOLLOW_LINKS);

            // a reader opens it read-only now, and locks it later
            Process reader = new ProcessBuilder("sh", "-c", "exec 3<\"$1\"; echo opened; read go; flock -s 3; head -n 1 <&3; echo locked; exec sleep 120",
                    "sh", guard.toString()).start();
            started.add(reader);
            BufferedReader said = new BufferedReader(new InputStreamReader(reader.getInputStream(), StandardCharsets.UTF_8));
            assertThat(said.readLine()).isEqualTo("opened");

            Acquisition taken = store.acquire("build", holder);
            assertThat(taken).isInstanceOf(Acquisition.Granted.class);
            assertThat(Files.getAttribute(guard, "unix:ino", LinkOption.NOFOLLOW_LINKS)).as("the guard was replaced").isNotEqualTo(old);
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(guard))).isEqualTo("rw-------");
            assertThat(Files.readString(guard).strip()).as("its fence carried over").isEqualTo("2");

            OutputStream in = reader.getOutputStream();
            in.write("go\n".getBytes(StandardCharsets.UTF_8));
            in.flush();
            assertThat(said.readLine()).as("the old guard holds no fence any version would take").isEqualTo("replaced; call again");
            assertThat(said.readLine()).as("the reader holds the old guard's lock").isEqualTo("locked");
            assertThat(((Acquisition.Granted) taken).lease().release()).as("a call that does not wait gets the lock").isTrue();
            Acquisition again = store.acquire("build", holder);
            assertThat(again).isInstanceOf(Acquisition.Granted.class);
            assertThat(((Acquisition.Granted) again).lease().fence()).isEqualTo(3);
        }
    }

    @Test
    void writersRacingAStoreThatReplacesTheGuardAreStillOneAtATime() throws Exception {
        Path dir = Files.createDirectory(tmp.resolve("leases"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        int writers = 4;
        List<LeaseStore> stores = new ArrayList<>();
        List<Identity> holders = new ArrayList<>();
        for (int i = 0; i < writers; i++) {
            stores.add(LeaseStore.builder().directory(dir).build());
            holders.add(children.sleeping());
        }
        Path guard = dir.resolve("build.guard");
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(writers);
        try {
            for (int round = 0; round < 40; round++) {
                Object before = null;
                if (Files.exists(guard)) {
                    Files.setPosixFilePermissions(guard, PosixFilePermissions.fromString("rw-r--r--")); // replaced by the first writer in
                    before = Files.getAttribute(guard, "unix:ino", LinkOption.NOFOLLOW_LINKS);
                }
                java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(writers);
                List<java.util.concurrent.Future<Acquisition>> asked = new ArrayList<>();
                for (int i = 0; i < writers; i++) {
                    LeaseStore store = stores.get(i);
                    Identity holder = holders.get(i);
                    asked.add(pool.submit(() -> {
                        start.await();
                        return store.acquire("build", holder);
                    }));
                }
                List<Lease> granted = new ArrayList<>();
                for (java.util.concurrent.Future<Acquisition> f : asked) {
                    Acquisition a = f.get(Eventually.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
                    if (a instanceof Acquisition.Granted g) {
                        granted.add(g.lease());
                    }
                }
                assertThat(granted).as("round %d: one writer is granted", round).hasSize(1);
                assertThat(granted.get(0).fence()).as("round %d", round).isEqualTo(round + 1);
                assertThat(granted.get(0).release()).isTrue();
                assertThat(Files.getAttribute(guard, "unix:ino", LinkOption.NOFOLLOW_LINKS)).as("round %d: replaced", round)
                        .isNotEqualTo(before);
            }
        } finally {
            pool.shutdownNow();
            for (LeaseStore store : stores) {
                store.close();
            }
        }
    }
}
