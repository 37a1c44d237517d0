package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.proclive.Children;
import dev.proclive.Identity;
import dev.proclive.ProcLive;
import java.io.IOException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * The guard's lock against everything in this JVM that could drop a POSIX record lock: other code
 * opening and closing the guard, a second copy of the library in another class loader, the same
 * directory through a bind mount. Each time an acquire in this JVM is held open just before it
 * replaces the record, the disturbance happens, and another process asks for the same lease: it
 * must wait, then find the lease held — never be granted the same fence.
 */
@EnabledOnOs({OS.LINUX, OS.MAC})
class LeaseLockIT {

    @TempDir
    Path tmp;
    final Children children = new Children();
    final List<Process> workers = new ArrayList<>();
    /** The stores a test opened: closed before the directory is deleted, so none writes its session file into the deletion. */
    final List<LeaseStore> stores = new ArrayList<>();

    private LeaseStore open(Path dir) throws java.io.IOException {
        LeaseStore store = LeaseStore.open(dir);
        stores.add(store);
        return store;
    }

    @AfterEach
    void stop() throws InterruptedException {
        stores.forEach(LeaseStore::close);
        for (Process p : workers) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        children.killAll();
    }

    /** What happens while this JVM's acquire is held open; returns what a contender in this JVM got, if any. */
    interface Disturbance {
        CompletableFuture<String> start() throws Exception;
    }

    /**
     * Holds an acquire in {@code store} open before its rename, runs {@code disturbance}, asks
     * another process, lets the acquire finish; asserts a single grant.
     */
    private void assertOneHolder(LeaseStore store, Disturbance disturbance) throws Exception {
        Identity holder = ProcLive.identify(children.start("sleep", "120").pid()).orElseThrow();
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        store.files().beforeReplace(() -> {
            inside.countDown();
            try {
                go.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        CompletableFuture<Acquisition> mine = CompletableFuture.supplyAsync(() -> {
            try {
                return store.acquire("build", holder);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        assertThat(inside.await(30, TimeUnit.SECONDS)).as("the acquire reached its rename").isTrue();

        CompletableFuture<String> inJvm = disturbance.start();
        Process outside = worker("once", store.directory().orElseThrow().toString(), "build");
        // Long enough for a JVM to start and take an unlocked guard; a locked one keeps it waiting.
        boolean outsideFinished = outside.waitFor(3, TimeUnit.SECONDS);
        boolean inJvmFinished = inJvm.isDone() && !"none".equals(inJvm.getNow(null));
        go.countDown();

        Acquisition a = mine.get(30, TimeUnit.SECONDS);
        assertThat(a).isInstanceOf(Acquisition.Granted.class);
        assertThat(((Acquisition.Granted) a).lease().fence()).isEqualTo(1);
        assertThat(outside.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String outsideSaid = new String(outside.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertThat(outsideFinished).as("the other process waited for the lock (it said %s)", outsideSaid).isFalse();
        assertThat(outsideSaid).as("the other process, after the grant").isEqualTo("held");
        assertThat(inJvmFinished).as("the contender in this JVM waited for the lock").isFalse();
        assertThat(inJvm.get(60, TimeUnit.SECONDS)).as("the contender in this JVM").isIn("held", "none");
        assertThat(store.read("build").orElseThrow().fence()).isEqualTo(1);
        assertThat(store.read("build").orElseThrow().holder()).isEqualTo(holder);
    }

    private Process worker(String... args) throws IOException {
        Process p = new ProcessBuilder(dev.proclive.JavaMain.command(List.of(), LeaseWorker.class, args)).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        workers.add(p);
        return p;
    }

    /**
     * Two stores of one JVM over one directory, one through a bind mount of it, are one place: the end of one's wait
     * does not take out the ticket the other's wait for the same holder-to-be shares. Needs root for the mount.
     */
    @Test
    void twoStoresOverOneDirectoryThroughABindMountShareTheirTicket() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to bind-mount in a mount namespace");
        Path real = Files.createDirectories(tmp.resolve("real"));
        Path bound = Files.createDirectories(tmp.resolve("bound"));
        List<String> mounted = List.of("unshare", "-m", "--propagation", "private", "sh", "-c",
                "mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\"", "sh", real.toString(), bound.toString());
        Process p = new ProcessBuilder(dev.proclive.JavaMain.command(mounted, LeaseWorker.class, "spelled",
                real.resolve("leases").toString(), "build", bound.resolve("leases").toString()))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        workers.add(p);
        String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(said).as("the first wait's ticket stays").isEqualTo("tickets 1");
    }

    @Test
    void otherCodeThatOpensAndClosesTheGuardDropsNothing() throws Exception {
        LeaseStore store = open(tmp.resolve("leases"));
        assertOneHolder(store, () -> {
            Path guard = store.directory().orElseThrow().resolve("build.guard");
            try (FileChannel other = FileChannel.open(guard, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                other.tryLock(); // even tries a lock of its own, then closes
            } catch (java.nio.channels.OverlappingFileLockException e) {
                // this JVM's FileChannel locks are not proclive's: nothing to see here
            }
            Files.readAllBytes(guard); // and a plain read, which opens and closes it too
            return CompletableFuture.completedFuture("none");
        });
    }

    @Test
    void aSecondCopyOfTheLibraryInAnotherClassLoaderWaitsAndThrowsNothing() throws Exception {
        LeaseStore store = open(tmp.resolve("leases"));
        assertOneHolder(store, () -> {
            ClassLoader copy = new ChildFirst(LeaseStore.class.getProtectionDomain().getCodeSource().getLocation());
            Class<?> storeClass = Class.forName(LeaseStore.class.getName(), true, copy);
            assertThat(storeClass).isNotSameAs(LeaseStore.class);
            Class<?> procLive = Class.forName(ProcLive.class.getName(), true, copy);
            Object self = ((Optional<?>) procLive.getMethod("current").invoke(null)).orElseThrow();
            Object other = storeClass.getMethod("open", Path.class).invoke(null, store.directory().orElseThrow());
            Method acquire = storeClass.getMethod("acquire", String.class, self.getClass());
            return CompletableFuture.supplyAsync(() -> {
                try {
                    Object result = acquire.invoke(other, "build", self);
                    return result.getClass().getSimpleName().toLowerCase(java.util.Locale.ROOT);
                } catch (ReflectiveOperationException e) {
                    return "threw " + e.getCause();
                }
            });
        });
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void theSameDirectoryThroughABindMountSharesTheLock() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "bind mounts need root; runs in CI as root");
        Path real = Files.createDirectories(tmp.resolve("leases"));
        Path bound = Files.createDirectories(tmp.resolve("bound"));
        run("mount", "--bind", real.toString(), bound.toString());
        try {
            LeaseStore store = open(real);
            LeaseStore throughMount = open(bound);
            assertThat(throughMount.directory()).isNotEqualTo(store.directory());
            Identity self = ProcLive.current().orElseThrow();
            assertOneHolder(store, () -> CompletableFuture.supplyAsync(() -> {
                try {
                    Acquisition a = throughMount.acquire("build", self);
                    return a instanceof Acquisition.Held ? "held" : a.toString();
                } catch (Exception e) {
                    return "threw " + e;
                }
            }));
        } finally {
            run("umount", "-l", bound.toString());
        }
    }

    private static void run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).inheritIO().start();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(String.join(" ", command)).isZero();
    }

    /**
     * Loads this library's classes anew from its own class directory or jar (a shaded copy inside a
     * plugin), and everything else (JNA, Jackson, the JDK) from the application loader.
     */
    private static final class ChildFirst extends URLClassLoader {
        ChildFirst(URL library) {
            super(new URL[] {library}, ChildFirst.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                if (!name.startsWith("dev.proclive.") || name.startsWith("dev.proclive.lease.LeaseLockIT")) {
                    return super.loadClass(name, resolve);
                }
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    c = findClass(name);
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }
    }
}
