package dev.proclive.lease.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Identity;
import dev.proclive.etcd.Etcd;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.Records;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A kept grant's record renewed by another process at another TTL sits on that process's etcd lease, which nobody
 * keeps once that process is gone: its holder's store keeps it from the read that shows it, and only a later revision
 * moves the grant, so a read that lands late never takes it back to a lease its record has left.
 */
class RenewedElsewhereTest {

    /** The answer to a keep-alive of each etcd lease, in seconds; absent: an unreachable member. */
    private final Map<Long, Long> answers = new ConcurrentHashMap<>();
    private final List<Long> keptAlive = new CopyOnWriteArrayList<>();
    /** The last etcd lease granted. */
    private final java.util.concurrent.atomic.AtomicLong lastLease = new java.util.concurrent.atomic.AtomicLong(100);
    /** Run inside a keep-alive, as another thread's write would land while it is on its way. */
    private volatile Runnable meanwhile = () -> { };
    private final EtcdKeepAlive keepAlive = new EtcdKeepAlive(etcd(), "test keep-alive", Clock.systemUTC(),
            n -> n, n -> { });
    private final Identity holder = new Identity(ProcessHandle.current().pid(), "1", "b", "h", "m", "");
    private final LeaseRecord granted = Records.fenced(Records.granted("build", LeaseRecord.State.HELD, holder, holder,
            Instant.now(), Duration.ofSeconds(30), Optional.empty(), Optional.empty(), OptionalLong.empty(),
            Optional.empty()), 20);
    private final LeaseRecord renewed = Records.renewed(granted, holder, Instant.now(), Duration.ofSeconds(2));

    @AfterEach
    void stop() {
        keepAlive.stop();
    }

    private Etcd etcd() {
        return (Etcd) Proxy.newProxyInstance(RenewedElsewhereTest.class.getClassLoader(), new Class<?>[] {Etcd.class},
                (p, m, a) -> switch (m.getName()) {
                    case "keepAlive" -> {
                        long id = (Long) a[0];
                        keptAlive.add(id);
                        meanwhile.run();
                        Long seconds = answers.get(id);
                        if (seconds == null || Thread.currentThread().isInterrupted()) {
                            throw new IOException("no member answered (test)");
                        }
                        yield seconds;
                    }
                    case "txn" -> new Etcd.Outcome(true, 5, List.of());
                    case "grant" -> lastLease.incrementAndGet();
                    case "endpoints" -> "";
                    case "cluster" -> Optional.empty();
                    case "close", "revoke" -> null;
                    default -> throw new UnsupportedOperationException(m.getName());
                });
    }

    @Test
    void aLaterRevisionOnAnotherEtcdLeaseIsKeptAliveAtOnceByTheTtlEtcdAnswers() {
        answers.put(7L, 30L);
        answers.put(9L, 2L);
        keepAlive.keep(granted, 7, 20);
        keepAlive.moved(renewed, 9, 25);
        assertThat(keptAlive).as("a first keep-alive sent at once, before any round").containsExactly(9L);
        assertThat(keepAlive.keeping("build", 20)).isTrue();
        assertThat(keepAlive.lost("build", 20)).isFalse();
        keepAlive.moved(renewed, 9, 26);
        assertThat(keptAlive).as("already on it: nothing more to ask").containsExactly(9L);
    }

    @Test
    void aReadThatLandsLateMovesTheGrantNot() {
        answers.put(7L, 30L);
        answers.put(9L, 2L);
        keepAlive.keep(granted, 7, 20);
        keepAlive.moved(renewed, 9, 20);
        keepAlive.moved(renewed, 9, 12);
        assertThat(keptAlive).as("no revision after the grant's own write").isEmpty();
        keepAlive.keep(renewed, 7, 30); // its holder's renewal moved it back, at a later revision
        keepAlive.moved(renewed, 9, 25); // then a read sent before it answers
        assertThat(keptAlive).isEmpty();
        assertThat(keepAlive.keeping("build", 20)).isTrue();
    }

    /**
     * Its holder's renewal wrote while the first keep-alive was on its way: the write is the later, and the grant stays
     * on it whatever etcd answers for the other lease (gone: not lost for it; alive: not moved by it).
     */
    @ParameterizedTest
    @ValueSource(longs = {0, 1})
    void aWriteWhileTheFirstKeepAliveIsOnItsWayStays(long answer) throws InterruptedException {
        answers.put(7L, 30L);
        answers.put(9L, answer);
        keepAlive.keep(granted, 7, 20);
        meanwhile = () -> keepAlive.keep(renewed, 7, 30);
        keepAlive.moved(renewed, 9, 25);
        meanwhile = () -> { };
        answers.put(9L, 0L); // the other lease gone: a grant kept on it would be lost at the next round
        Thread.sleep(1500); // past a round of a 1 s lease, were it kept
        assertThat(keptAlive).as("asked once, never kept").containsExactly(9L);
        assertThat(keepAlive.lost("build", 20)).as("kept on the lease its holder wrote it onto").isFalse();
        assertThat(keepAlive.keeping("build", 20)).isTrue();
    }

    /**
     * Two renewals elsewhere in a row, read on two threads: the read of the later one asks first and is answered last.
     * The later revision stands, not the answer that came last (the grant stayed on the earlier lease, and the record's
     * went unkept).
     */
    @Test
    void theLaterOfTwoMovesStandsWhicheverIsAnsweredFirst() {
        answers.put(7L, 30L);
        answers.put(9L, 2L);
        answers.put(10L, 3L);
        LeaseRecord later = Records.renewed(granted, holder, Instant.now(), Duration.ofSeconds(3));
        keepAlive.keep(granted, 7, 20);
        meanwhile = () -> {
            meanwhile = () -> { };
            keepAlive.moved(renewed, 9, 25); // the earlier move, read and answered while the later one's is on its way
        };
        keepAlive.moved(later, 10, 27);
        assertThat(keptAlive).containsExactly(10L, 9L);
        keepAlive.moved(later, 10, 28);
        assertThat(keptAlive).as("kept on the later move's lease already").containsExactly(10L, 9L);
    }

    /** A record that says 30 s on an etcd lease of 2 s is judged by the 2 s: unconfirmed for 1.5 s, it is lost. */
    @Test
    void theTtlIsTheOneEtcdAnswersNotTheRecordsClaim() throws InterruptedException {
        answers.put(7L, 30L);
        answers.put(9L, 2L);
        keepAlive.keep(granted, 7, 20);
        keepAlive.moved(granted, 9, 25); // the record still claims 30 s
        assertThat(keepAlive.lost("build", 20)).isFalse();
        answers.remove(9L); // no member answers for it from now
        long start = System.nanoTime();
        while (!keepAlive.lost("build", 20) && System.nanoTime() - start < Duration.ofSeconds(20).toNanos()) {
            Thread.sleep(20);
        }
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("lost by 3/4 of 2 s, not of 30 s")
                .isLessThan(Duration.ofSeconds(10));
    }

    /** A listing's keep (a keeper of others' grants) knows no revision: it moves no grant kept at a known one. */
    @Test
    void aListingsKeepMovesNoGrantKeptAtAKnownRevision() {
        answers.put(9L, 2L);
        keepAlive.keep(granted, 7, 20);
        keepAlive.keep(granted, 11, 0); // listed before the holder's write, answered after it
        keepAlive.moved(renewed, 9, 15); // and a late read: older than the write kept
        assertThat(keptAlive).isEmpty();
        keepAlive.moved(renewed, 9, 25);
        assertThat(keptAlive).containsExactly(9L);
    }

    /** Interrupted while asking: no answer of etcd's, and the grant is not lost for it. */
    @Test
    void anInterruptedFirstKeepAliveLosesNothing() {
        answers.put(7L, 30L);
        keepAlive.keep(granted, 7, 20);
        Thread.currentThread().interrupt();
        try {
            keepAlive.moved(renewed, 9, 25);
        } finally {
            assertThat(Thread.interrupted()).as("the interrupt kept").isTrue();
        }
        assertThat(keepAlive.lost("build", 20)).isFalse();
    }

    /** Found gone by another write while the first keep-alive was on its way: not kept by that answer. */
    @Test
    void aLeaseFoundGoneMeanwhileIsNotTaken() {
        answers.put(7L, 30L);
        answers.put(9L, 2L);
        keepAlive.keep(Records.renewed(Records.fenced(Records.granted("other", LeaseRecord.State.HELD, holder, holder,
                Instant.now(), Duration.ofSeconds(2), Optional.empty(), Optional.empty(), OptionalLong.empty(),
                Optional.empty()), 5), holder, Instant.now(), Duration.ofSeconds(2)), 9, 5);
        keepAlive.keep(granted, 7, 20);
        meanwhile = () -> keepAlive.forget(9);
        keepAlive.moved(renewed, 9, 25);
        assertThat(keepAlive.lost("build", 20)).isTrue();
        assertThat(keepAlive.lostBecause("build", 20)).hasValueSatisfying(why -> assertThat(why).contains("meanwhile"));
    }

    @Test
    void anotherGrantOrHolderIsNotTaken() {
        answers.put(9L, 2L);
        keepAlive.keep(granted, 7, 20);
        keepAlive.moved(Records.fenced(renewed, 21), 9, 25);
        Identity other = new Identity(holder.pid() + 1, "1", "b", "h", "m", "");
        keepAlive.moved(Records.renewed(Records.fenced(Records.regranted(granted, other, other, Instant.now()), 20),
                other, Instant.now(), Duration.ofSeconds(2)), 9, 26);
        assertThat(keptAlive).isEmpty();
    }

    @Test
    void aMovedRecordWhoseLeaseEtcdDoesNotConfirmIsLostAndSaysWhy() {
        answers.put(7L, 30L);
        keepAlive.keep(granted, 7, 20);
        keepAlive.moved(renewed, 11, 25); // no answer
        assertThat(keepAlive.lost("build", 20)).isTrue();
        assertThat(keepAlive.lostBecause("build", 20)).hasValueSatisfying(why -> assertThat(why)
                .contains("a renewal elsewhere moved its record onto etcd lease 11").contains("did not confirm"));
    }

    /** Nor does a listing read before the lease was found gone keep it again (a keeper of others' grants). */
    @Test
    void aMovedRecordWhoseLeaseIsGoneIsLost() {
        answers.put(7L, 30L);
        answers.put(12L, 0L);
        keepAlive.keep(granted, 7, 20);
        keepAlive.moved(renewed, 12, 25);
        assertThat(keepAlive.lost("build", 20)).isTrue();
        assertThat(keepAlive.lostBecause("build", 20)).hasValueSatisfying(why -> assertThat(why).contains("gone"));
        keepAlive.keep(renewed, 12, 0);
        assertThat(keepAlive.lost("build", 20)).as("still lost").isTrue();
        assertThat(keepAlive.keeping("build", 20)).isFalse();
    }

    /** Two reads of one move (two renewals at one TTL, the second on the first's lease): the first answer is no loss. */
    @Test
    void twoReadsOfOneMoveAreNoLoss() {
        answers.put(7L, 30L);
        answers.put(9L, 10L);
        keepAlive.keep(granted, 7, 20);
        meanwhile = () -> {
            meanwhile = () -> { };
            keepAlive.moved(renewed, 9, 25);
        };
        keepAlive.moved(renewed, 9, 27);
        assertThat(keptAlive).containsExactly(9L, 9L);
        assertThat(keepAlive.lost("build", 20)).isFalse();
        assertThat(keepAlive.keeping("build", 20)).isTrue();
    }

    /** A lease shared for a record that must last a while is one with that long left: a new one, if need be. */
    @Test
    void aSharedLeaseThatMustLastIsOneWithThatLongLeft() throws Exception {
        long first = keepAlive.leases().shared(Duration.ofSeconds(30));
        keepAlive.leases().answered(first);
        assertThat(keepAlive.leases().shared(Duration.ofSeconds(30))).as("shared while it has half its TTL left").isEqualTo(first);
        keepAlive.leases().answered(first);
        Thread.sleep(20);
        long lasting = keepAlive.leases().shared(Duration.ofSeconds(30), Duration.ofSeconds(30));
        keepAlive.leases().answered(lasting);
        assertThat(lasting).as("less than 30 s left on the first").isNotEqualTo(first);
    }
}
