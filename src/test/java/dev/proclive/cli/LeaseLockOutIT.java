package dev.proclive.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static dev.proclive.Tools.onPath;
import static dev.proclive.Tools.libfaketime;
import static dev.proclive.Tools.steppedClock;

import dev.proclive.Children;
import dev.proclive.Cli;
import dev.proclive.Eventually;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The lock-outs of a directory store, each tried the way it was met: no user of a shared directory
 * is locked out by another or by a reader, a writer stopped inside its section makes others fail in
 * bounded time instead of hanging them, a killed waiter's ticket holds nobody up, something planted
 * where a lease's file should be is corrupt (65, in our words) and {@code break} clears the queue,
 * and a wall clock stepped back, once or again and again, never stretches a wait. The runs as
 * other users need root ({@code setpriv} to any uid); the others run as anyone.
 */
@EnabledOnOs(OS.LINUX)
class LeaseLockOutIT {

    /** A group shared by two users that exist only as numbers here: setpriv needs no account. */
    private static final int GROUP = 64_170;
    private static final int ALICE = 64_171;
    private static final int BOB = 64_172;

    @RegisterExtension
    final Children children = new Children();

    @TempDir
    Path tmp;

    private static List<String> as(int uid, List<String> command) {
        return OtherUsers.as(uid, GROUP, GROUP, command);
    }

    /** A directory the users of {@code GROUP} share: {@code 02775 root:GROUP}, as README recommends. */
    private Path sharedDirectory() throws IOException, InterruptedException {
        tmp.toFile().setExecutable(true, false);
        Path shared = Files.createDirectory(tmp.resolve("shared"));
        Files.setAttribute(shared, "unix:gid", GROUP);
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxr-x"));
        new ProcessBuilder("chmod", "g+s", shared.toString()).start().waitFor(); // setgid: files join the group
        return shared;
    }

    private static String mode(Path file) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(file, java.nio.file.LinkOption.NOFOLLOW_LINKS));
    }

    @Test
    void everyUserOfASharedGroupWritableDirectoryCanTakeWhatAnotherLeft() throws Exception {
        OtherUsers.needed();
        Path jar = Cli.worldReadableCopy(Files.createDirectory(tmp.resolve("jar")));
        String dir = sharedDirectory().toString();
        String first = Long.toString(children.sleeper().pid());
        Cli.Result alice = Cli.exec(as(ALICE, Cli.command(jar, "lease", "acquire", "build", "--dir", dir, "--holder", first)), "");
        assertThat(alice.exit()).as("alice takes it: %s", alice).isZero();
        Path shared = Path.of(dir);
        assertThat(mode(shared.resolve("build.guard"))).as("the guard, writable by the group as the directory is")
                .isEqualTo("rw-rw----");
        assertThat(mode(shared.resolve("build.lease"))).as("the record").isEqualTo("rw-rw-r--");

        Cli.Result broken = Cli.exec(as(BOB, Cli.command(jar, "lease", "break", "build", "--dir", dir)), "");
        assertThat(broken.exit()).as("bob breaks alice's lease: %s", broken).isZero();
        String second = Long.toString(children.sleeper().pid());
        Cli.Result bob = Cli.exec(as(BOB, Cli.command(jar, "lease", "acquire", "build", "--dir", dir, "--holder", second)), "");
        assertThat(bob.exit()).as("bob takes it: %s", bob).isZero();
        Cli.Result ran = Cli.exec(as(ALICE, Cli.command(jar, "lease", "run", "other", "--dir", dir, "--", "true")), "");
        assertThat(ran.exit()).as("alice runs under another lease: %s", ran).isZero();
        Cli.Result bobRan = Cli.exec(as(BOB, Cli.command(jar, "lease", "run", "other", "--dir", dir, "--", "true")), "");
        assertThat(bobRan.exit()).as("and bob after her: %s", bobRan).isZero();
    }

    @Test
    void aReaderOfTheDirectoryCannotHoldItsWritersOut() throws Exception {
        OtherUsers.needed();
        assumeTrue(onPath("flock"), "flock (util-linux) is needed");
        Path jar = Cli.worldReadableCopy(Files.createDirectory(tmp.resolve("jar")));
        tmp.toFile().setExecutable(true, false);
        Path own = Files.createDirectory(tmp.resolve("alices"));
        Files.setAttribute(own, "unix:uid", ALICE);
        Files.setPosixFilePermissions(own, PosixFilePermissions.fromString("rwxr-xr-x")); // others may read
        String holder = Long.toString(children.sleeper().pid());
        Cli.Result taken = Cli.exec(as(ALICE, Cli.command(jar, "lease", "acquire", "build", "--dir", own.toString(),
                "--holder", holder)), "");
        assertThat(taken.exit()).as("alice takes it: %s", taken).isZero();
        // bob may read the directory, not write it: he locks the guard, or tries to
        Process reader = new ProcessBuilder(as(BOB, List.of("flock", "-s", own.resolve("build.guard").toString(), "sleep", "60")))
                .redirectErrorStream(true).start();
        children.adopt(reader);
        reader.waitFor(Eventually.scaled(Duration.ofSeconds(1)).toMillis(), TimeUnit.MILLISECONDS);
        long start = System.nanoTime();
        Process waiter = new ProcessBuilder(as(ALICE, Cli.command(jar, "lease", "acquire", "build", "--dir", own.toString(),
                "--holder", Long.toString(children.sleeper().pid()), "--wait", "3"))).start();
        children.adopt(waiter);
        assertThat(waiter.waitFor(Eventually.scaled(Duration.ofSeconds(15)).toMillis(), TimeUnit.MILLISECONDS))
                .as("alice's wait of 3 s ends though bob tried to hold her guard").isTrue();
        assertThat(waiter.exitValue()).as("held by its live holder").isEqualTo(1);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Eventually.scaled(Duration.ofSeconds(10)));
        Cli.Result shown = Cli.exec(as(BOB, Cli.command(jar, "lease", "show", "build", "--dir", own.toString())), "");
        assertThat(shown.exit()).as("bob still reads the record: %s", shown).isZero();
        assertThat(mode(own.resolve("build.guard"))).as("the guard is alice's alone").isEqualTo("rw-------");
    }

    /**
     * In a directory with the sticky bit ({@code /tmp}), where no user may replace another's file, no other
     * user may write or lock one the store made either: else one could forge the record in place (a second
     * holder) or the guard (a fence granted twice), or hold everyone out through the guard's lock.
     */
    @Test
    void inAStickyDirectoryNoOtherUserCanWriteOrLockWhatTheStoreMade() throws Exception {
        OtherUsers.needed();
        Path jar = Cli.worldReadableCopy(Files.createDirectory(tmp.resolve("jar")));
        tmp.toFile().setExecutable(true, false);
        Path sticky = Files.createDirectory(tmp.resolve("sticky"));
        Files.setPosixFilePermissions(sticky, PosixFilePermissions.fromString("rwxrwxrwx"));
        assertThat(new ProcessBuilder("chmod", "+t", sticky.toString()).start().waitFor()).isZero();
        String dir = sticky.toString();
        String holder = Long.toString(children.sleeper().pid());
        Cli.Result alice = Cli.exec(as(ALICE, Cli.command(jar, "lease", "acquire", "build", "--dir", dir, "--holder", holder)), "");
        assertThat(alice.exit()).as("alice takes it: %s", alice).isZero();
        assertThat(mode(sticky.resolve("build.guard"))).as("the guard, alice's alone").isEqualTo("rw-------");
        assertThat(mode(sticky.resolve("build.lease"))).as("the record, readable").isEqualTo("rw-r--r--");

        for (String file : List.of("build.lease", "build.guard")) {
            // an open to write that creates nothing: fs.protected_regular refuses any that may create, whatever the mode
            Cli.Result forged = Cli.exec(as(BOB, List.of("sh", "-c", "printf 1 | dd status=none conv=nocreat,notrunc of="
                    + sticky.resolve(file))), "");
            assertThat(forged.exit()).as("bob writes into %s: %s", file, forged).isNotZero();
        }
        Cli.Result taken = Cli.exec(as(BOB, Cli.command(jar, "lease", "acquire", "build", "--dir", dir, "--holder",
                Long.toString(children.sleeper().pid()))), "");
        assertThat(taken.exit()).as("bob cannot take it: %s", taken).isEqualTo(74);
        assertThat(taken.err()).contains("sticky bit").contains("group-writable directory");
        Cli.Result shown = Cli.exec(as(BOB, Cli.command(jar, "lease", "show", "build", "--dir", dir)), "");
        assertThat(shown.exit()).as("bob reads the record: %s", shown).isZero();
        assertThat(shown.out()).contains("\"fence\":1,\"state\":\"held\"", "\"pid\":" + holder);
        assertThat(Files.readString(sticky.resolve("build.guard")).strip()).as("the guard's fence").isEqualTo("1");
    }

    /** A process of this user holding {@code guard}'s lock as a writer stopped inside its section does. */
    private Process holdingTheLock(Path guard) throws Exception {
        return holdingTheLockFor(guard, "120");
    }

    @Test
    void aWriterStoppedInsideItsSectionMakesOthersFailInBoundedTimeNotHang() throws Exception {
        assumeTrue(onPath("flock"), "flock (util-linux) is needed");
        String dir = tmp.resolve("leases").toString();
        assertThat(Cli.run("lease", "acquire", "build", "--dir", dir, "--holder", Long.toString(children.sleeper().pid()))
                .exit()).isZero();
        holdingTheLock(Path.of(dir, "build.guard"));

        long start = System.nanoTime();
        Process waiter = new ProcessBuilder(Cli.command(Cli.jar(), "lease", "acquire", "build", "--dir", dir, "--holder",
                Long.toString(children.sleeper().pid()), "--wait", "3")).start();
        children.adopt(waiter);
        assertThat(waiter.waitFor(Eventually.scaled(Duration.ofSeconds(20)).toMillis(), TimeUnit.MILLISECONDS))
                .as("acquire --wait 3 ends").isTrue();
        String said = new String(waiter.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(waiter.exitValue()).as("an I/O failure (it said: %s)", said).isEqualTo(74);
        assertThat(said).contains("locked by another process");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Eventually.scaled(Duration.ofSeconds(12)));

        Cli.Result broken = Cli.run("lease", "break", "build", "--dir", dir);
        assertThat(broken.exit()).as("break is bounded too: %s", broken).isEqualTo(74);
        assertThat(broken.err()).contains("locked by another process");
    }

    /** A process of this user holding {@code guard}'s lock for {@code seconds}, as a writer busy in its section (a scan). */
    private Process holdingTheLockFor(Path guard, String seconds) throws Exception {
        Process p = new ProcessBuilder("flock", "-x", guard.toString(), "sh", "-c", "echo locked; exec sleep " + seconds).start();
        children.adopt(p);
        String said = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))
                .readLine();
        assertThat(said).isEqualTo("locked");
        return p;
    }

    @Test
    void aWriterBusyInItsSectionForAMomentIsWaitedForByCallsThatDoNotWaitAndByWaits() throws Exception {
        assumeTrue(onPath("flock"), "flock (util-linux) is needed");
        Path dir = tmp.resolve("leases");
        dev.proclive.Identity me = dev.proclive.ProcLive.current().orElseThrow();
        try (dev.proclive.lease.LeaseStore store = dev.proclive.lease.LeaseStore.open(dir)) {
            for (String name : List.of("build", "spawned")) {
                assertThat(store.acquire(name, me)).isInstanceOf(dev.proclive.lease.Acquisition.Granted.class);
                assertThat(store.breakLease(name)).isPresent(); // free, its guard made
            }

            holdingTheLockFor(dir.resolve("build.guard"), "1.5");
            assertThat(store.acquire("build", me, Duration.ZERO)).as("an acquire that does not wait waits for the lock as one"
                    + " without a wait does").isInstanceOf(dev.proclive.lease.Acquisition.Granted.class);

            holdingTheLockFor(dir.resolve("spawned.guard"), "1.5");
            dev.proclive.lease.Acquisition spawned = store.spawn("spawned", new ProcessBuilder("true"));
            assertThat(spawned).as("spawn without a wait").isInstanceOf(dev.proclive.lease.Acquisition.Started.class);
            ((dev.proclive.lease.Acquisition.Started) spawned).process().waitFor();
            assertThat(store.breakLease("build")).isPresent();
        }

        holdingTheLockFor(dir.resolve("build.guard"), "1.5");
        Cli.Result waited = Cli.run("lease", "acquire", "build", "--dir", dir.toString(), "--holder",
                Long.toString(children.sleeper().pid()), "--wait", "10");
        assertThat(waited.exit()).as("a wait of 10 s outwaits a lock held for 1.5 s: %s", waited).isZero();
    }

    @Test
    void aWaitWhoseLastLookFindsTheLockBusyAnswersWhatItLastSawNotAnIoFailure() throws Exception {
        assumeTrue(onPath("flock"), "flock (util-linux) is needed");
        Path dir = tmp.resolve("leases");
        dev.proclive.Identity holder = dev.proclive.ProcLive.identify(children.sleeper().pid()).orElseThrow();
        dev.proclive.Identity me = dev.proclive.ProcLive.current().orElseThrow();
        try (dev.proclive.lease.LeaseStore store = dev.proclive.lease.LeaseStore.open(dir)) {
            assertThat(store.acquire("build", holder)).isInstanceOf(dev.proclive.lease.Acquisition.Granted.class);
            java.util.concurrent.CompletableFuture<dev.proclive.lease.Acquisition> waited =
                    java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                        try {
                            return store.acquire("build", me, Duration.ofSeconds(2));
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    });
            Eventually.until("the waiter asked and took its ticket", Duration.ofSeconds(10), () -> {
                Path queue = dir.resolve("build.queue");
                return Files.isRegularFile(queue) && Files.size(queue) > 0;
            }); // it waits for the holder's end now, the lock let go
            holdingTheLockFor(dir.resolve("build.guard"), "6"); // past the wait's end
            assertThat(waited.get(30, TimeUnit.SECONDS)).as("the wait's answer: held by its live holder")
                    .isInstanceOf(dev.proclive.lease.Acquisition.Held.class);
        }
    }

    /** The identity {@code proclive identify PID} prints. */
    private static String identity(long pid) {
        Cli.Result r = Cli.run("identify", Long.toString(pid));
        assertThat(r.exit()).isZero();
        return r.line();
    }

    @Test
    void aKilledWaitersTicketHoldsNobodyUpAndBreakClearsTheQueue() throws Exception {
        String dir = tmp.resolve("leases").toString();
        Path queue = Path.of(dir, "build.queue");
        Process first = children.sleeper();
        assertThat(Cli.run("lease", "acquire", "build", "--dir", dir, "--holder", Long.toString(first.pid())).exit()).isZero();
        // a waiter for a shell that lives on is killed -9 while it waits
        Process waitedFor = children.sleeper();
        Process dying = new ProcessBuilder(Cli.command(Cli.jar(), "lease", "acquire", "build", "--dir", dir, "--holder",
                Long.toString(waitedFor.pid()), "--wait", "999999999")).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        children.adopt(dying);
        Eventually.until("the waiter queued", Duration.ofSeconds(60), () -> Files.exists(queue));
        dying.destroyForcibly().waitFor();
        first.destroyForcibly().waitFor();
        Cli.Result next = Cli.run("lease", "acquire", "build", "--dir", dir, "--holder", Long.toString(children.sleeper().pid()));
        assertThat(next.exit()).as("the dead waiter's ticket is dropped though the process it waited for lives: %s", next)
                .isZero();

        // a live waiter's ticket: break clears it
        Process live = new ProcessBuilder(Cli.command(Cli.jar(), "lease", "acquire", "build", "--dir", dir, "--holder",
                Long.toString(children.sleeper().pid()), "--wait", "120")).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        children.adopt(live);
        Eventually.until("the live waiter queued", Duration.ofSeconds(60), () -> Files.exists(queue));
        Cli.Result broken = Cli.run("lease", "break", "build", "--dir", dir);
        assertThat(broken.exit()).as("%s", broken).isZero();
        assertThat(queue).as("break clears the queue").doesNotExist();
    }

    /** {@code lease ACTION build} on {@code store}, then {@code more}. */
    private static String[] on(List<String> store, String action, String... more) {
        List<String> all = new ArrayList<>(List.of("lease", action, "build"));
        all.addAll(store);
        all.addAll(List.of(more));
        return all.toArray(String[]::new);
    }

    @Test
    void onEtcdAKilledWaitersTicketGoesWithItAndBreakClearsTheQueue() throws Exception {
        try (dev.proclive.lease.EtcdCluster etcd = dev.proclive.lease.EtcdCluster.start(
                Files.createDirectories(tmp.resolve("etcd")), 1);
             dev.proclive.etcd.EtcdGateway raw = dev.proclive.etcd.EtcdGateway.open(etcd.endpoints(),
                     java.util.Optional.empty(), Duration.ofSeconds(5), dev.proclive.text.StrictJson.mapper())) {
            List<String> store = List.of("--etcd", etcd.endpoints().get(0).toString(), "--prefix", "doors/");
            assertThat(Cli.run(on(store, "acquire", "--holder", Long.toString(children.sleeper().pid()))).exit()).isZero();
            Process dying = new ProcessBuilder(Cli.command(Cli.jar(), on(store, "acquire", "--holder",
                    Long.toString(children.sleeper().pid()), "--wait", "999999999")))
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            children.adopt(dying);
            Eventually.until("the waiter queued", Duration.ofSeconds(60), () -> raw.list("doors/build.queue/").size() == 1);
            dying.destroyForcibly().waitFor(); // killed -9 while the process it waited for lives on
            Eventually.until("its ticket expires with it, though nobody asks", Duration.ofSeconds(30),
                    () -> raw.list("doors/build.queue/").isEmpty());

            Process live = new ProcessBuilder(Cli.command(Cli.jar(), on(store, "acquire", "--holder",
                    Long.toString(children.sleeper().pid()), "--wait", "120")))
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            children.adopt(live);
            Eventually.until("the live waiter queued", Duration.ofSeconds(60), () -> raw.list("doors/build.queue/").size() == 1);
            Cli.Result broken = Cli.run(on(store, "break"));
            assertThat(broken.exit()).as("%s", broken).isZero();
            assertThat(raw.list("doors/build.queue/")).as("break clears the queue").isEmpty();
        }
    }

    /**
     * A ticket whose waiter is UNKNOWN here (another PID namespace, whose death nothing here could see)
     * holds nobody back, though it stays in the queue for its waiter: a waiter killed with its
     * namespace kept a free lease shut until its {@code --wait} ran out, which may be years.
     */
    @Test
    void aTicketWhoseWaiterIsUnknownHereHoldsNobodyBack() throws Exception {
        String dir = tmp.resolve("leases").toString();
        String elsewhere = identity(children.sleeper().pid()).replaceFirst("\"pidns\":\"[0-9]+\"", "\"pidns\":\"1\"");
        assertThat(elsewhere).contains("\"pidns\":\"1\"");
        String holder = Long.toString(children.sleeper().pid());
        Cli.Result held = Cli.run("lease", "acquire", "build", "--dir", dir, "--holder", holder, "--print", "fence");
        assertThat(held.exit()).isZero();
        assertThat(Cli.run("lease", "release", "build", "--dir", dir, "--fence", held.line()).exit()).isZero();
        Files.writeString(Path.of(dir, "build.queue"), "{\"until\":\"2999-01-01T00:00:00.000Z\",\"who\":" + elsewhere + "}\n");
        Cli.Result granted = Cli.run("lease", "acquire", "build", "--dir", dir, "--holder", Long.toString(children.sleeper().pid()));
        assertThat(granted.exit()).as("%s", granted).isZero();
        assertThat(Files.readString(Path.of(dir, "build.queue"))).as("its ticket stays").contains("\"pidns\":\"1\"");
    }

    /**
     * A waiter stopped while it waits (SIGSTOP, as ^Z stops it) sets its ticket's time no more: once
     * that passes, a free lease goes to the next caller, though the stopped waiter asked to wait for
     * years. It took the lease shut until its {@code --wait} ran out.
     */
    @Test
    void aStoppedWaitersTicketLapsesAndTheFreeLeaseGoesOn() throws Exception {
        String dir = tmp.resolve("leases").toString();
        Cli.Result held = Cli.run("lease", "acquire", "build", "--dir", dir, "--holder",
                Long.toString(children.sleeper().pid()), "--print", "fence");
        assertThat(held.exit()).isZero();
        Process waiter = queuedWaiter(dir, "999999");
        stopOutsideItsLock(waiter);
        try {
            assertThat(Cli.run("lease", "release", "build", "--dir", dir, "--fence", held.line()).exit()).isZero();
            String newcomer = Long.toString(children.sleeper().pid());
            Cli.Result granted = Eventually.until("the stopped waiter's ticket lapsed",
                    Duration.ofSeconds(60), () -> Cli.run("lease", "acquire", "build", "--dir", dir, "--holder", newcomer),
                    r -> r.exit() != 1);
            assertThat(granted.exit()).as("%s", granted).isZero();
        } finally {
            new ProcessBuilder("kill", "-CONT", Long.toString(waiter.pid())).start().waitFor();
            waiter.destroyForcibly();
        }
    }

    /** A waiter ended by a signal (^C, a supervisor's TERM) takes its ticket out, and exits 128+N. */
    @Test
    void aWaiterEndedByASignalTakesItsTicketOut() throws Exception {
        String dir = tmp.resolve("leases").toString();
        Cli.Result held = Cli.run("lease", "acquire", "build", "--dir", dir, "--holder",
                Long.toString(children.sleeper().pid()), "--print", "fence");
        assertThat(held.exit()).as("%s", held).isZero();
        Process waiter = queuedWaiter(dir, "999999");
        waiter.destroy(); // SIGTERM
        assertThat(waiter.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(waiter.exitValue()).isEqualTo(128 + 15);
        Path queue = Path.of(dir, "build.queue");
        assertThat(!Files.exists(queue) || !Files.readString(queue).contains("\"pid\":" + waiter.pid()))
                .as("its ticket taken out").isTrue();
    }

    /** A {@code lease acquire build --wait SECONDS} in the background, once its ticket is in the queue. */
    private Process queuedWaiter(String dir, String seconds) throws Exception {
        Process waiter = children.adopt(new ProcessBuilder(Cli.command(Cli.jar(), "lease", "acquire", "build", "--dir", dir,
                "--holder", Long.toString(children.sleeper().pid()), "--wait", seconds))
                .redirectError(ProcessBuilder.Redirect.DISCARD).redirectOutput(ProcessBuilder.Redirect.DISCARD).start());
        Path queue = Path.of(dir, "build.queue");
        Eventually.until("the waiter queued", Duration.ofSeconds(30), () -> Files.exists(queue)
                && Files.readString(queue).contains("\"pid\":" + waiter.pid()));
        return waiter;
    }

    /** SIGSTOP, sent again until it lands while {@code p} holds no lock: a stopped lock holder would hold up everyone. */
    private static void stopOutsideItsLock(Process p) throws Exception {
        String pid = " " + p.pid() + " ";
        for (int tried = 0; ; tried++) {
            assertThat(new ProcessBuilder("kill", "-STOP", Long.toString(p.pid())).start().waitFor()).isZero();
            if (!Files.readString(Path.of("/proc/locks")).contains(pid) || tried == 20) {
                return;
            }
            new ProcessBuilder("kill", "-CONT", Long.toString(p.pid())).start().waitFor();
            Thread.sleep(50);
        }
    }

    /**
     * A waiter that waits longer than its ticket's time sets it again, and keeps its place: past that
     * time, the lease freed, a caller that does not wait is refused while it waits, and it is served.
     */
    @Test
    void aWaiterKeepsItsTicketPastItsTimeAndIsServedFirst() throws Exception {
        String dir = tmp.resolve("leases").toString();
        Cli.Result held = Cli.run("lease", "acquire", "build", "--dir", dir, "--holder",
                Long.toString(children.sleeper().pid()), "--print", "fence");
        assertThat(held.exit()).isZero();
        Process waiter = queuedWaiter(dir, "120");
        Path queue = Path.of(dir, "build.queue");
        long queued = System.nanoTime();
        Thread.sleep(Duration.ofSeconds(12).toMillis()); // past the time its ticket was first given (10 s)
        assertThat(Files.readString(queue)).as("still queued %s ms on", (System.nanoTime() - queued) / 1_000_000)
                .contains("\"pid\":" + waiter.pid());
        assertThat(Cli.run("lease", "release", "build", "--dir", dir, "--fence", held.line()).exit()).isZero();
        Cli.Result jumping = Cli.run("lease", "acquire", "build", "--dir", dir, "--holder", Long.toString(children.sleeper().pid()));
        assertThat(jumping.exit()).as("it keeps its place: %s", jumping).isEqualTo(1);
        assertThat(waiter.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(waiter.exitValue()).as("the waiter is served").isZero();
    }

    @Test
    void theRefusalForATicketAheadNeverCallsADeadHolderAlive() throws Exception {
        String dir = tmp.resolve("leases").toString();
        Process first = children.sleeper();
        assertThat(Cli.run("lease", "acquire", "build", "--dir", dir, "--holder", Long.toString(first.pid())).exit()).isZero();
        first.destroyForcibly().waitFor();
        // a ticket of a live process that came first (written as an older version wrote it)
        Files.writeString(Path.of(dir, "build.queue"), "{\"until\":\"2999-01-01T00:00:00.000Z\",\"who\":"
                + identity(children.sleeper().pid()) + "}\n");
        Cli.Result refused = Cli.run("lease", "acquire", "build", "--dir", dir, "--holder", Long.toString(children.sleeper().pid()));
        assertThat(refused.exit()).as("%s", refused).isEqualTo(1);
        assertThat(refused.out()).as("the verdict on the record's holder, which is dead")
                .contains("\"liveness\":\"dead\"").doesNotContain("\"liveness\":\"alive\"");
        assertThat(refused.err()).as("why, in words").contains("which is dead").contains("has waited for it longer")
                .doesNotContain("alive");
    }

    @Test
    void aDirectoryWhereTheQueueShouldBeIsCorruptAndBreakRemovesIt() throws Exception {
        String dir = tmp.resolve("leases").toString();
        assertThat(Cli.run("lease", "acquire", "build", "--dir", dir, "--holder", Long.toString(children.sleeper().pid()))
                .exit()).isZero();
        Files.createDirectory(Path.of(dir, "build.queue"));
        Cli.Result waited = Cli.run("lease", "acquire", "build", "--dir", dir, "--holder",
                Long.toString(children.sleeper().pid()), "--wait", "1");
        assertThat(waited.exit()).as("corrupt, as a directory at the record is: %s", waited).isEqualTo(65);
        assertThat(waited.err()).contains("a directory stands where build.queue should be; break the lease to go on (proclive lease break build)");
        Cli.Result broken = Cli.run("lease", "break", "build", "--dir", dir);
        assertThat(broken.exit()).as("%s", broken).isZero();
        assertThat(Path.of(dir, "build.queue")).as("break removes it").doesNotExist();
        Cli.Result again = Cli.run("lease", "acquire", "build", "--dir", dir, "--holder",
                Long.toString(children.sleeper().pid()), "--wait", "1");
        assertThat(again.exit()).as("%s", again).isZero();
    }

    @Test
    void aLinkPlantedAsTheGuardIsCorruptAndItsTargetUntouched() throws Exception {
        Path dir = Files.createDirectory(tmp.resolve("leases"));
        Path target = Files.writeString(tmp.resolve("target"), "precious\n");
        Files.createSymbolicLink(dir.resolve("build.guard"), target);
        String holder = Long.toString(children.sleeper().pid());
        List<List<String>> calls = List.of(
                List.of("lease", "acquire", "build", "--dir", dir.toString(), "--holder", holder),
                List.of("lease", "acquire", "build", "--dir", dir.toString(), "--holder", holder, "--wait", "1"),
                List.of("lease", "show", "build", "--dir", dir.toString()),
                List.of("lease", "break", "build", "--dir", dir.toString()),
                List.of("lease", "run", "build", "--dir", dir.toString(), "--", "true"));
        for (List<String> call : calls) {
            Cli.Result r = Cli.run(call.toArray(String[]::new));
            assertThat(r.exit()).as("%s: %s", call, r).isEqualTo(65);
            assertThat(r.err()).as("%s", call).contains("a symbolic link stands where build.guard should be; remove it by hand")
                    .doesNotContain("NOFOLLOW_LINKS");
        }
        assertThat(Files.readString(target)).isEqualTo("precious\n");
        assertThat(Files.isSymbolicLink(dir.resolve("build.guard"))).isTrue();
    }

    /**
     * A {@code lease acquire build --wait SECONDS} queued behind a live holder, its wall clock read
     * from {@code offset} ({@code "+0"} until the test steps it; see {@code Tools.steppedClock}).
     */
    private Process waiterOnASteppedClock(Path offset, String seconds) throws Exception {
        String lib = libfaketime();
        String dir = tmp.resolve("leases").toString();
        assertThat(Cli.run("lease", "acquire", "build", "--dir", dir, "--holder", Long.toString(children.sleeper().pid()))
                .exit()).isZero();
        Files.writeString(offset, "+0\n");
        ProcessBuilder builder = new ProcessBuilder(Cli.command(Cli.jar(), "lease", "acquire", "build", "--dir", dir,
                "--holder", Long.toString(children.sleeper().pid()), "--wait", seconds))
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        Process waiter = children.adopt(steppedClock(builder, lib, offset).start());
        Eventually.until("the waiter queued", Duration.ofSeconds(30), () -> Files.exists(Path.of(dir, "build.queue")));
        return waiter;
    }

    @Test
    void aWallClockSteppedBackNeverStretchesAWait() throws Exception {
        Path offset = tmp.resolve("offset");
        long start = System.nanoTime();
        Process waiter = waiterOnASteppedClock(offset, "8");
        Files.writeString(offset, "-1h\n"); // the wall clock (and with it libfaketime's monotonic one) goes back an hour
        assertThat(waiter.waitFor(Eventually.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS))
                .as("--wait 8 ends though the clock went back an hour").isTrue();
        assertThat(waiter.exitValue()).as("still held by its live holder").isEqualTo(1);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Eventually.scaled(Duration.ofSeconds(20)));
    }

    @Test
    void aWallClockSteppedBackAgainAndAgainNeverStretchesAWait() throws Exception {
        Path offset = tmp.resolve("offset");
        long start = System.nanoTime();
        Process waiter = waiterOnASteppedClock(offset, "5");
        Duration most = Eventually.scaled(Duration.ofSeconds(10));
        // an hour further back every 1.5 s, for as long as the wait may take at most
        for (int hours = 1; waiter.isAlive() && System.nanoTime() - start < most.toNanos(); hours++) {
            Files.writeString(offset, "-" + hours + "h\n");
            waiter.waitFor(1500, TimeUnit.MILLISECONDS);
        }
        assertThat(waiter.isAlive()).as("--wait 5 ended within %s though the clock kept stepping back", most).isFalse();
        assertThat(waiter.exitValue()).as("still held by its live holder").isEqualTo(1);
    }

    @Test
    void aWallClockSteppedBackNeverStretchesTheTimeoutOfWait() throws Exception {
        String lib = libfaketime();
        Path offset = Files.writeString(tmp.resolve("offset"), "+0\n");
        ProcessBuilder builder = new ProcessBuilder(Cli.command(Cli.jar(), "wait", identity(children.sleeper().pid()),
                "--timeout", "8")).redirectError(ProcessBuilder.Redirect.DISCARD);
        steppedClock(builder, lib, offset);
        long start = System.nanoTime();
        Process waiter = builder.start();
        children.adopt(waiter);
        assertThat(waiter.waitFor(3, TimeUnit.SECONDS)).as("still waiting, for a live process").isFalse(); // time itself is tested
        Files.writeString(offset, "-1h\n");
        assertThat(waiter.waitFor(Eventually.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS))
                .as("--timeout 8 ends though the clock went back an hour").isTrue();
        assertThat(waiter.exitValue()).as("still alive at the timeout").isEqualTo(1);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Eventually.scaled(Duration.ofSeconds(20)));
    }
}
