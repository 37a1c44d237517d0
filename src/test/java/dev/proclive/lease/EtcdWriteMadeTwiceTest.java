package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Identity;
import dev.proclive.ProcLive;
import dev.proclive.etcd.Etcd;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A write that went through on a member whose answer was lost, sent on to the next member, fails its compare there on
 * its own change: it is this caller's write, not a conflict. Before, an acquire answered a grant "again" with itself as
 * the previous record, and a reservation answered Held by its own reserver, its token known to nobody.
 */
class EtcdWriteMadeTwiceTest {

    private final FakeEtcd fake = new FakeEtcd();
    /** When set, the next write that compares is made, then sent again (its answer is the second's). */
    private final AtomicBoolean twice = new AtomicBoolean();
    private final Identity me = ProcLive.current().orElseThrow();

    private Etcd members() {
        return (Etcd) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Etcd.class}, (p, m, a) -> {
            try {
                if (m.getName().equals("txn") && a.length == 3 && !((List<?>) a[0]).isEmpty()
                        && ((List<?>) a[1]).stream().anyMatch(op -> op instanceof Etcd.Put) && twice.getAndSet(false)) {
                    m.invoke(fake, a); // made by the first member, its answer lost
                }
                return m.invoke(fake, a);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        });
    }

    private LeaseStore store() throws java.io.IOException {
        return LeaseStore.builder().etcdClient(members()).prefix("p/")
                .policy(LeasePolicy.builder().ttl(Duration.ofSeconds(30)).build()).build();
    }

    @Test
    void anAcquireMadeTwiceIsGrantedOnceAsNew() throws Exception {
        try (LeaseStore store = store()) {
            twice.set(true);
            Acquisition a = store.acquire("build", me);
            assertThat(twice).as("the write was made twice").isFalse();
            assertThat(a).isInstanceOf(Acquisition.Granted.class);
            Acquisition.Granted g = (Acquisition.Granted) a;
            assertThat(g.again()).as("not granted before").isFalse();
            assertThat(g.previous()).isEmpty();
            assertThat(store.read("build")).hasValueSatisfying(r -> assertThat(r.fence()).isEqualTo(g.lease().fence()));
            assertThat(g.lease().isValid()).isTrue();
            assertThat(g.lease().release()).isTrue();
        }
    }

    @Test
    void aReservationMadeTwiceIsItsReserversWithItsToken() throws Exception {
        try (LeaseStore store = store()) {
            twice.set(true);
            Acquisition a = store.reserve("build", me);
            assertThat(twice).as("the write was made twice").isFalse();
            assertThat(a).as("not held by its own reserver").isInstanceOf(Acquisition.Granted.class);
            Lease reserved = ((Acquisition.Granted) a).lease();
            assertThat(reserved.state()).isEqualTo(LeaseRecord.State.RESERVED);
            assertThat(reserved.token()).isPresent();
            assertThat(reserved.release()).isTrue();
        }
    }

    @Test
    void aRenewalMadeTwiceKeepsTheGrant() throws Exception {
        try (LeaseStore store = store()) {
            Lease lease = ((Acquisition.Granted) store.acquire("build", me)).lease();
            twice.set(true);
            LeaseRecord renewed = lease.renew();
            assertThat(twice).as("the write was made twice").isFalse();
            assertThat(renewed.fence()).isEqualTo(lease.fence());
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.lost()).isNotDone();
            assertThat(lease.release()).isTrue();
        }
    }
}
