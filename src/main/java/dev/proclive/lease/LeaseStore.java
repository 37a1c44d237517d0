package dev.proclive.lease;

import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.ProcLive;
import dev.proclive.Verdict;
import java.io.IOException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A directory of named single-writer leases, each held by a process identity.
 *
 * <pre>{@code
 * LeaseStore store = LeaseStore.open(Path.of(".state/leases"));
 * Identity owner = ProcLive.resolveOwner().orElseThrow();
 * if (store.acquire("build", owner) instanceof Acquisition.Granted granted) {
 *     try (Lease lease = granted.lease()) {
 *         writeWithFence(lease.fence());
 *     }
 * }
 * }</pre>
 *
 * <p>A lease is granted when it is free (no record, or a released one), again to the same holder
 * (same fence), and over a holder proven DEAD (exited, a zombie, its PID reused, the machine
 * rebooted) at once, with the old holder and the verdict kept in the record's {@code previous}.
 * It is never taken from an ALIVE holder. A holder whose liveness cannot be proven (UNKNOWN) keeps
 * it, unless the {@link LeasePolicy} takes UNKNOWN over and the record was not renewed for the TTL
 * it promised. Every new grant gets a fence one higher than any granted before, also after a
 * release, a {@link #breakLease break} or the record's deletion by hand.
 *
 * <p>Files in the directory: {@code NAME.lease}, the record, replaced atomically (a reader never
 * sees half a record, and a process killed at any step leaves the old record or the new one);
 * {@code NAME.guard}, never deleted, locked while a record is read, judged and replaced, and
 * holding the highest fence ever granted; {@code .NAME.PID-START.RANDOM.tmp}, a record being
 * written by that process, created exclusively, removed by its writer if the write fails and by a
 * later writer once that process is proven DEAD. A directory the store creates is owner-only
 * (0700); files are owner-only (0600) whenever the directory grants no group or other access,
 * whoever writes them; an existing shared directory is used as it is, so a hook and its agent
 * running as different users can share a group-writable one.
 *
 * <p>Judging and writing happen one process at a time: within a JVM under one lock per guard file
 * (by its device and inode, so two paths to one directory share it), across processes under a
 * {@code flock(2)} lock on a descriptor the store opens for it ({@code LockFileEx} on Windows). Such
 * a lock belongs to that descriptor alone: other code opening and closing the guard, a second copy
 * of this library in another class loader, or the same directory reached through a bind mount
 * cannot drop it. On Linux and macOS locking loads JNA. {@link #read} takes no lock and needs no
 * write access. Instances are thread-safe.
 *
 * <p>What a lease does not promise: holders on other hosts are never judged DEAD (their liveness is
 * UNKNOWN, taken over only by a policy that says so, after their TTL); a directory with the sticky
 * bit (such as {@code /tmp} itself) cannot pass a lease from one user to another, since the kernel
 * refuses to replace another user's record there.
 */
public final class LeaseStore {

    /** 1 to 128 of {@code [A-Za-z0-9._-]}, not starting with {@code .} or {@code -}. */
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9._-]{0,127}");

    private final LeaseFiles files;
    private final LeasePolicy policy;
    private final Identity writer;

    private LeaseStore(LeaseFiles files, LeasePolicy policy, Identity writer) {
        this.files = files;
        this.policy = policy;
        this.writer = writer;
    }

    /** A store over {@code dir} with {@link LeasePolicy#defaults()}; see {@link #open(Path, LeasePolicy)}. */
    public static LeaseStore open(Path dir) throws IOException {
        return open(dir, LeasePolicy.defaults());
    }

    /**
     * A store over {@code dir}, created (owner-only, on POSIX) if it is missing.
     *
     * @throws NullPointerException  if an argument is null
     * @throws NotDirectoryException if {@code dir} exists and is not a directory
     * @throws IOException           if it cannot be created or resolved
     */
    public static LeaseStore open(Path dir, LeasePolicy policy) throws IOException {
        Objects.requireNonNull(dir, "dir");
        Objects.requireNonNull(policy, "policy");
        Identity self = ProcLive.current().orElseGet(() -> new Identity(ProcessHandle.current().pid(), "", "", "", "", ""));
        return new LeaseStore(LeaseFiles.open(dir, self), policy, self);
    }

    /** The directory, resolved. */
    public Path directory() {
        return files.directory();
    }

    /** The policy acquisitions follow. */
    public LeasePolicy policy() {
        return policy;
    }

    /** The files, for tests in this package. */
    LeaseFiles files() {
        return files;
    }

    /**
     * Takes lease {@code name} for {@code holder}, or tells why not.
     *
     * @param holder the process the lease is for; it need not be the calling one (a hook takes a
     *               lease for its owner), but it must be ALIVE now
     * @throws IllegalArgumentException if {@code name} is not a lease name, or {@code holder} is not ALIVE
     * @throws LeaseCorruptException    if the record or guard cannot be trusted, or the lease has
     *                                  granted its last fence; nothing is changed
     * @throws IOException              if the files cannot be read or written
     */
    public Acquisition acquire(String name, Identity holder) throws IOException {
        checkName(name);
        Objects.requireNonNull(holder, "holder");
        Verdict alive = ProcLive.explain(holder);
        if (alive.liveness() != Liveness.ALIVE) {
            throw new IllegalArgumentException("a lease is granted to a live process only; the holder is " + alive);
        }
        return files.locked(name, guard -> {
            Optional<LeaseRecord> current = files.read(name);
            Instant now = now();
            if (current.isEmpty() || !current.get().held()) {
                return grant(name, guard, holder, current, Optional.empty(), now);
            }
            LeaseRecord record = trusted(name, current.get(), guard);
            if (sameProcess(record.holder(), holder)) {
                LeaseRecord again = new LeaseRecord(name, record.fence(), LeaseRecord.State.HELD, holder, writer,
                        record.acquiredAt(), now, policy.ttl(), record.previous());
                files.replace(name, again);
                return new Acquisition.Granted(new Lease(this, again), current);
            }
            Verdict verdict = ProcLive.explain(record.holder());
            if (verdict.liveness() == Liveness.ALIVE) {
                return new Acquisition.Held(record, verdict);
            }
            if (verdict.liveness() == Liveness.UNKNOWN) {
                if (!policy.takeUnknownAfterTtl()) {
                    return new Acquisition.Undecided(record, verdict, Optional.empty());
                }
                if (now.isBefore(record.freshUntil())) {
                    return new Acquisition.Undecided(record, verdict, Optional.of(record.freshUntil()));
                }
            }
            LeaseRecord.Takeover takeover = new LeaseRecord.Takeover(record.fence(), record.holder(), verdict, now);
            return grant(name, guard, holder, current, Optional.of(takeover), now);
        });
    }

    /** A new grant: the fence one above any this lease ever had, never past 2^63-1. */
    private Acquisition grant(String name, LeaseFiles.Guard guard, Identity holder, Optional<LeaseRecord> replaced,
                              Optional<LeaseRecord.Takeover> takeover, Instant now) throws IOException {
        long highest = Math.max(guard.fence(), replaced.map(LeaseRecord::fence).orElse(0L));
        if (highest == Long.MAX_VALUE) {
            throw new LeaseCorruptException(name, "it has granted its last fence, " + Long.MAX_VALUE
                    + "; nothing was granted (use another name)");
        }
        LeaseRecord granted = new LeaseRecord(name, highest + 1, LeaseRecord.State.HELD, holder, writer, now, now,
                policy.ttl(), takeover);
        files.replace(name, granted);
        guard.fence(granted.fence());
        return new Acquisition.Granted(new Lease(this, granted), replaced);
    }

    /**
     * A held record, if its fence is not below the guard's: one that is was restored from an old
     * copy (the guard only grows), and granting or renewing it would hand out a fence already given.
     */
    private static LeaseRecord trusted(String name, LeaseRecord held, LeaseFiles.Guard guard) throws IOException {
        long highest = guard.fence();
        if (held.fence() < highest) {
            throw new LeaseCorruptException(name, "the record is held at fence " + held.fence() + " but fence "
                    + highest + " was granted since: it was rolled back; break the lease to go on");
        }
        return held;
    }

    /**
     * The record of lease {@code name}, or empty when there is none. Takes no lock and needs no
     * write access: the record is replaced atomically, never written in place.
     *
     * @throws IllegalArgumentException if {@code name} is not a lease name
     * @throws LeaseCorruptException    if the record cannot be trusted
     * @throws IOException              if it cannot be read
     */
    public Optional<LeaseRecord> read(String name) throws IOException {
        checkName(name);
        return files.read(name);
    }

    /**
     * Renews lease {@code name} at {@code fence}: its {@code renewedAt} becomes now. The record keeps
     * the TTL it has unless this store's policy set one {@linkplain LeasePolicy#renewalTtl() explicitly}.
     *
     * @return the record written
     * @throws LeaseLostException if the record is missing, released, or at another fence
     * @throws IOException        as for {@link #acquire}
     */
    public LeaseRecord renew(String name, long fence) throws IOException {
        checkName(name);
        return renew(name, fence, null);
    }

    LeaseRecord renew(String name, long fence, Identity holder) throws IOException {
        return files.locked(name, guard -> {
            LeaseRecord r = files.read(name).orElseThrow(() -> new LeaseLostException(name, "there is no record"));
            if (!r.held() || r.fence() != fence || holder != null && !sameProcess(r.holder(), holder)) {
                throw new LeaseLostException(name, "the record is " + r.state().json() + " at fence " + r.fence()
                        + " for pid " + r.holder().pid() + ", not held at fence " + fence);
            }
            trusted(name, r, guard);
            Duration ttl = policy.renewalTtl().orElse(r.ttl());
            LeaseRecord renewed = new LeaseRecord(name, fence, LeaseRecord.State.HELD, r.holder(), writer,
                    r.acquiredAt(), now(), ttl, r.previous());
            files.replace(name, renewed);
            return renewed;
        });
    }

    /**
     * Releases lease {@code name} at {@code fence}: writes a released record, the fence kept.
     *
     * @return true if it is released at that fence now (also when it already was); false, and
     *         nothing written, when there is no record or it is at another fence
     * @throws IOException as for {@link #acquire}
     */
    public boolean release(String name, long fence) throws IOException {
        checkName(name);
        return release(name, fence, null);
    }

    boolean release(String name, long fence, Identity holder) throws IOException {
        return files.locked(name, guard -> {
            Optional<LeaseRecord> current = files.read(name);
            if (current.isEmpty() || current.get().fence() != fence) {
                return false;
            }
            LeaseRecord r = current.get();
            if (!r.held()) {
                return true;
            }
            if (holder != null && !sameProcess(r.holder(), holder)) {
                return false;
            }
            files.replace(name, released(trusted(name, r, guard)));
            return true;
        });
    }

    /**
     * The operator's override: releases lease {@code name} whoever holds it, the fence kept (the
     * next grant gets the one after it). Also how a record found rolled back is set right.
     *
     * @return the released record written, or empty when there was no record
     * @throws IOException as for {@link #acquire}
     */
    public Optional<LeaseRecord> breakLease(String name) throws IOException {
        checkName(name);
        return files.locked(name, guard -> {
            Optional<LeaseRecord> current = files.read(name);
            if (current.isEmpty()) {
                return Optional.empty();
            }
            LeaseRecord r = released(current.get());
            files.replace(name, r);
            guard.fence(Math.max(guard.fence(), r.fence()));
            return Optional.of(r);
        });
    }

    private LeaseRecord released(LeaseRecord r) {
        return new LeaseRecord(r.name(), r.fence(), LeaseRecord.State.RELEASED, r.holder(), writer, r.acquiredAt(),
                r.renewedAt(), r.ttl(), r.previous());
    }

    /** Whether two identities name the same process: everything but the name, which is for people. */
    static boolean sameProcess(Identity a, Identity b) {
        return a.pid() == b.pid() && a.start().equals(b.start()) && a.boot().equals(b.boot())
                && a.host().equals(b.host()) && a.pidns().equals(b.pidns());
    }

    /**
     * Refuses what is not a lease name, touching nothing: 1 to 128 of {@code [A-Za-z0-9._-]}, not
     * starting with {@code .} or {@code -}. Every method that takes a name checks it this way.
     *
     * @throws NullPointerException     if {@code name} is null
     * @throws IllegalArgumentException naming the rule, if it is not a lease name
     */
    public static void checkName(String name) {
        Objects.requireNonNull(name, "name");
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("a lease name is 1 to 128 of [A-Za-z0-9._-], not starting with"
                    + " '.' or '-': " + LeaseText.quote(name));
        }
    }

    private static Instant now() {
        return Instant.now().truncatedTo(ChronoUnit.MILLIS);
    }
}
