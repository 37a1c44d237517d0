package dev.proclive.lease;

import java.util.Locale;

/**
 * What happened to a grant (granted, ended or lost): one vocabulary for a record's
 * {@linkplain LeaseRecord.Ending#how() end}, a {@linkplain LeaseLost#why() loss} and a watch's
 * {@linkplain LeaseEvent#kind() event}.
 */
public enum LeaseChange {
    /** Granted (held or reserved) to a holder: a new grant, or one handed to a new holder at its fence. */
    GRANTED,
    /** Its holder released it. */
    RELEASED,
    /** Its holder, the process spawned for it, exited: the record says {@code exited}, with its status when known. */
    EXITED,
    /** The process it was reserved for could not be started. */
    SPAWN_FAILED,
    /** Another holder was granted it over a holder proven gone (DEAD, or UNKNOWN past its TTL), or it was claimed. */
    TAKEN_OVER,
    /** An operator broke it ({@code proclive lease break}, or the store's {@code breakLease}). */
    BROKEN,
    /** Its record went away by itself (etcd: nobody kept it alive) or was removed while granted. */
    EXPIRED,
    /** Its keep-alive or its renewal was not confirmed for three quarters of its TTL: anyone may be granted it soon. */
    UNCONFIRMED,
    /**
     * Its holder ended. For a loss, the record says {@code exited}. For a watch, this machine saw it end while the
     * record still named it: told once per grant and holder, only for a holder this machine can judge, and the record
     * may still say granted until its end is written ({@code EXITED}) or a newcomer takes it over ({@code TAKEN_OVER});
     * on etcd a holder elsewhere is heard of when its record expires ({@code EXPIRED}).
     */
    HOLDER_DIED,
    /** Its record was removed, or released by another process. */
    REMOVED;

    /** The word in JSON and in the CLI's words: the name in lower case ({@code spawn_failed}, {@code taken_over}). */
    public String json() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Whether a record's {@code ended.how} may say it: released, broken, exited, spawn_failed. */
    public boolean endsARecord() {
        return this == RELEASED || this == BROKEN || this == EXITED || this == SPAWN_FAILED;
    }
}
