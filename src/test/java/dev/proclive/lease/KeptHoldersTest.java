package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Eventually;
import dev.proclive.Identity;
import dev.proclive.LivenessChecker;
import dev.proclive.ProcLive;
import dev.proclive.Reason;
import dev.proclive.lease.core.LeaseEngine;
import dev.proclive.lease.core.Pause;
import dev.proclive.lease.files.LeaseFiles;
import dev.proclive.platform.Platform;
import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.internal.Descendants;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code keepHolders} ends a kept grant when its holder is proven dead, and only then: a holder
 * the keeper can no longer see (its exit watch says UNKNOWN, as when {@code /proc} cannot be read
 * for a while) keeps its grant, and is judged again once it can be seen.
 */
@EnabledOnOs(OS.LINUX)
class KeptHoldersTest {

    @TempDir
    Path tmp;

    @Test
    void aHolderTheKeeperCannotSeeIsNotEndedAsDeadAndItsDeathIsWrittenOnceSeenAgain() throws Exception {
        ProcessIntrospector platform = Platform.introspector();
        AtomicBoolean blind = new AtomicBoolean();
        AtomicInteger holderLookups = new AtomicInteger();
        Process holder = new ProcessBuilder("sleep", "600").start();
        long pid = holder.pid();
        ProcessIntrospector blinding = (ProcessIntrospector) Proxy.newProxyInstance(ProcessIntrospector.class.getClassLoader(),
                new Class<?>[] {ProcessIntrospector.class}, (proxy, method, args) -> {
                    boolean lookup = method.getName().startsWith("lookup") && args != null && (long) args[0] == pid;
                    if (lookup) {
                        holderLookups.incrementAndGet();
                        if (blind.get()) {
                            return new ProcessLookup.Unknown(Reason.IO_ERROR, "cannot read the process (blinded by the test)");
                        }
                    }
                    try {
                        return method.invoke(platform, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        Identity self = ProcLive.current().orElseThrow();
        LeasePolicy policy = LeasePolicy.builder().ttl(Duration.ofSeconds(60)).build();
        List<String> said = new CopyOnWriteArrayList<>();
        Thread keeper = null;
        try (LeaseEngine engine = new LeaseEngine(LeaseFiles.open(tmp.resolve("leases"), self, id -> false, false,
                Platform.fileLocker()), policy, self, LivenessChecker.of(blinding), Clock.systemUTC(), Pause.REAL,
                Descendants.NONE)) {
            Identity held = ProcLive.identify(pid).orElseThrow();
            assertThat(engine.acquire("build", held)).isInstanceOf(Acquisition.Granted.class);
            keeper = new Thread(() -> {
                try {
                    engine.keepHolders(Duration.ofMillis(20), said::add);
                } catch (InterruptedException e) {
                    // stopped by the test
                }
            }, "test-keeper");
            keeper.setDaemon(true);
            keeper.start();
            Eventually.until("the keeper keeping", Duration.ofSeconds(20), () -> said.stream().anyMatch(s -> s.startsWith("keeping")));
            int seen = holderLookups.get();
            Eventually.until("the holder looked at by the keeper and its exit watch", Duration.ofSeconds(20),
                    () -> holderLookups.get() >= seen + 2);

            blind.set(true);
            int blindFrom = holderLookups.get();
            Eventually.until("the holder looked at, unseen, by the exit watch and five polls, or its grant ended",
                    Duration.ofSeconds(30), () -> holderLookups.get() >= blindFrom + 6
                            || engine.read("build").map(r -> !r.granted()).orElse(true));
            assertThat(engine.read("build")).as("not proven dead: still granted to its holder")
                    .hasValueSatisfying(r -> {
                        assertThat(r.granted()).isTrue();
                        assertThat(r.holder().pid()).isEqualTo(pid);
                    });
            assertThat(said).as("said once").filteredOn(s -> s.contains("cannot be seen from here now")).hasSize(1)
                    .allSatisfy(s -> assertThat(s).startsWith("lease build at fence ").contains("not ended"));

            blind.set(false);
            Eventually.until("the holder said seen again", Duration.ofSeconds(20),
                    () -> said.stream().anyMatch(s -> s.contains("its holder is seen again")));
            holder.destroy();
            holder.waitFor();
            Eventually.until("its death written once it could be seen", Duration.ofSeconds(30),
                    () -> engine.read("build").map(r -> !r.granted()).orElse(false));
            assertThat(engine.read("build").orElseThrow().ended()).hasValueSatisfying(
                    e -> assertThat(e.how()).isEqualTo(LeaseChange.EXITED));
        } finally {
            if (keeper != null) {
                keeper.interrupt();
                keeper.join(Eventually.scaled(Duration.ofSeconds(10)).toMillis());
            }
            holder.destroy();
            holder.waitFor();
        }
    }

    /**
     * A keeper returns once its store is closed: it would otherwise say, every poll and for ever,
     * that it cannot keep a grant through the closed store.
     */
    @Test
    void theKeeperReturnsOnceItsStoreIsClosed() throws Exception {
        Process holder = new ProcessBuilder("sleep", "600").start();
        LeaseStore store = LeaseStore.open(tmp.resolve("leases"));
        List<String> said = new CopyOnWriteArrayList<>();
        java.util.concurrent.CompletableFuture<Void> returned = new java.util.concurrent.CompletableFuture<>();
        Thread keeper = new Thread(() -> {
            try {
                store.keepHolders(Duration.ofMillis(20), said::add);
                returned.complete(null);
            } catch (Throwable e) {
                returned.completeExceptionally(e);
            }
        }, "test-keeper");
        keeper.setDaemon(true);
        try {
            assertThat(store.acquire("build", ProcLive.identify(holder.pid()).orElseThrow()))
                    .isInstanceOf(Acquisition.Granted.class);
            keeper.start();
            Eventually.until("the keeper keeping", Duration.ofSeconds(20), () -> said.stream().anyMatch(s -> s.startsWith("keeping")));
            store.close();
            returned.get(Eventually.scaled(Duration.ofSeconds(20)).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            assertThat(said).last().isEqualTo("the store is closed: no longer keeping");
        } finally {
            keeper.interrupt();
            store.close();
            holder.destroy();
            holder.waitFor();
        }
    }
}
