package dev.proclive.lease.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.Identity;
import dev.proclive.lease.book.LeaseBook;
import dev.proclive.etcd.Etcd;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** A waiter's ticket and a grant's record live on an etcd lease, whatever client is behind the book. */
class EtcdBookTicketTest {

    private final List<Etcd.Put> puts = new CopyOnWriteArrayList<>();

    /** Queues a waiter in a book whose etcd client answers every grant with {@code id}. */
    private void queue(long id) throws IOException {
        EtcdBook book = new EtcdBook(granting(id), "p/", Clock.systemUTC());
        Identity me = new Identity(ProcessHandle.current().pid(), "1", "b", "h", "m", "");
        try {
            book.locked("build", g -> {
                g.waiters();
                g.waiters(List.of(new LeaseBook.Waiter(me, Instant.now().plusSeconds(60))));
                return null;
            });
        } finally {
            book.close();
        }
    }

    /** An etcd client that answers every grant with {@code id}, and records every put. */
    private Etcd granting(long id) {
        return (Etcd) Proxy.newProxyInstance(EtcdBookTicketTest.class.getClassLoader(), new Class<?>[] {Etcd.class},
                (p, m, a) -> switch (m.getName()) {
                    case "txn" -> {
                        for (Object op : (List<?>) a[1]) {
                            if (op instanceof Etcd.Put put) {
                                puts.add(put);
                            }
                        }
                        yield new Etcd.Outcome(true, 5, List.of(Optional.empty(), Optional.empty()));
                    }
                    case "list" -> List.of();
                    case "grant" -> id;
                    case "keepAlive" -> 0L;
                    case "timeToLive" -> -1L;
                    case "endpoints" -> "";
                    case "cluster" -> Optional.empty();
                    case "close", "revoke" -> null;
                    default -> throw new UnsupportedOperationException(m.getName());
                });
    }

    /**
     * A ticket read under another key than this version would give it (an older version's, or a
     * nested store's record shaped as one) keeps that key: nothing read is moved, nor removed.
     */
    @Test
    void aTicketKeepsTheKeyItWasReadFrom() throws IOException {
        Identity waiting = new Identity(ProcessHandle.current().pid(), "1", "b", "h", "m", "");
        LeaseBook.Waiter read = new LeaseBook.Waiter(waiting, Instant.now().plusSeconds(60).truncatedTo(java.time.temporal.ChronoUnit.MILLIS));
        String older = "p/build.queue/" + "ab".repeat(16);
        String shaped = "p/build.queue/" + "cd".repeat(16);
        List<Etcd.Op> ops = new CopyOnWriteArrayList<>();
        Etcd etcd = (Etcd) Proxy.newProxyInstance(EtcdBookTicketTest.class.getClassLoader(), new Class<?>[] {Etcd.class},
                (p, m, a) -> switch (m.getName()) {
                    case "txn" -> {
                        ops.addAll((List<Etcd.Op>) a[1]);
                        yield new Etcd.Outcome(true, 5, List.of(Optional.empty(), Optional.empty()));
                    }
                    case "list" -> List.of(
                            new Etcd.KeyValue(older, dev.proclive.lease.book.LeaseJson.waiter(read)
                                    .getBytes(java.nio.charset.StandardCharsets.UTF_8), 3, 3, 0),
                            new Etcd.KeyValue(shaped, "{\"not\":\"a ticket\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8),
                                    4, 4, 0));
                    case "grant" -> 9L;
                    case "keepAlive" -> 0L;
                    case "timeToLive" -> -1L;
                    case "endpoints" -> "http://ticket-keys:2379";
                    case "cluster" -> Optional.empty();
                    case "close", "revoke" -> null;
                    default -> throw new UnsupportedOperationException(m.getName());
                });
        EtcdBook book = new EtcdBook(etcd, "p/", Clock.systemUTC());
        Identity later = new Identity(ProcessHandle.current().pid() + 1, "2", "b", "h", "m", "");
        try {
            book.locked("build", g -> {
                assertThat(g.waiters()).containsExactly(read);
                g.waiters(List.of(read, new LeaseBook.Waiter(later, waiting, Instant.now().plusSeconds(60))));
                return null;
            });
        } finally {
            book.close();
        }
        assertThat(ops.stream().filter(op -> op instanceof Etcd.Put || op instanceof Etcd.Delete))
                .as("nothing removed, only the new ticket written").singleElement()
                .isInstanceOfSatisfying(Etcd.Put.class, put -> assertThat(put.key()).isNotIn(older, shaped));
    }

    @Test
    void aTicketGoesOnTheEtcdLeaseGrantedForTickets() throws IOException {
        queue(7);
        assertThat(puts).singleElement().satisfies(put -> assertThat(put.lease()).isEqualTo(7));
    }

    /**
     * A grant answered with no lease (ID 0) is refused, and no ticket written: a ticket on no etcd
     * lease never expires, and a waiter killed -9 would hold the queue up for good.
     */
    @Test
    void aTicketIsNeverWrittenOnNoEtcdLease() {
        assertThatThrownBy(() -> queue(0)).isInstanceOf(IOException.class).hasMessageContaining("no lease");
        assertThat(puts).as("tickets written").isEmpty();
    }

    /** Nor is a grant's record: the store's etcd lease is refused where the client grants none. */
    @Test
    void aGrantsEtcdLeaseIsNeverNoLease() throws IOException {
        EtcdKeepAlive keepAlive = new EtcdKeepAlive(granting(0), "test keep-alive", Clock.systemUTC(),
                n -> n, n -> { });
        try {
            assertThatThrownBy(() -> keepAlive.leases().shared(java.time.Duration.ofSeconds(15)))
                    .isInstanceOf(IOException.class).hasMessageContaining("no lease for a grant's record");
        } finally {
            keepAlive.stop();
        }
        EtcdKeepAlive granting = new EtcdKeepAlive(granting(7), "test keep-alive", Clock.systemUTC(),
                n -> n, n -> { });
        try {
            assertThat(granting.leases().shared(java.time.Duration.ofSeconds(15))).isEqualTo(7);
        } finally {
            granting.stop();
        }
    }
}
