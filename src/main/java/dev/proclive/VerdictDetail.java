package dev.proclive;

import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.ProcessLookup;
import java.util.Optional;

/**
 * A verdict's detail: what the rows of {@link LivenessChecker}'s precedence found, said for a
 * person. The rules are decided there; this only words them, so that a check, which needs no words,
 * neither loads nor verifies them (a hook's cold JVM pays for every byte of every class it loads).
 */
final class VerdictDetail {

    /** What rows 2 to 4 compare an identity with, read once for a verdict or a batch. */
    record Here(Optional<String> host, Optional<String> machine, Optional<String> boot,
                Optional<String> pidns, boolean initialPidns) {
    }


    private VerdictDetail() {
    }

    /** The words for a reason rows 1 to 4 gave; {@code os} is asked why it cannot look, for UNSUPPORTED_PLATFORM. */
    static String guard(Reason reason, Identity id, Here here, ProcessIntrospector os) {
        switch (reason) {
            case NO_IDENTITY:
                return "no pid recorded (pid " + id.pid() + ")";
            case OTHER_HOST:
                if (!id.host().isEmpty() && !here.host().equals(Optional.of(id.host()))) {
                    return here.host().isEmpty() ? "this host's name cannot be read"
                            : "recorded on host " + shown(id.host()) + ", this is " + here.host().get();
                }
                return here.machine().isEmpty()
                        ? "recorded on machine " + shown(id.machine()) + ", and this machine's id cannot be read"
                        : "recorded on machine " + shown(id.machine()) + " (host " + shown(id.host())
                                + "), this is machine " + here.machine().get() + ": another machine with the same host name";
            case OTHER_PID_NAMESPACE:
                return here.pidns().isEmpty()
                        ? "recorded in PID namespace " + shown(id.pidns()) + ", this one cannot be read"
                        : "recorded in PID namespace " + shown(id.pidns()) + ", this process is in " + here.pidns().get();
            case REBOOTED:
                return "recorded in boot " + shown(id.boot()) + ", this is boot " + here.boot().orElse("");
            case IO_ERROR:
                return "the current boot id cannot be read";
            case NO_FINGERPRINT:
                return "recorded in boot " + shown(id.boot()) + ", which is not a boot id as this platform writes them"
                        + " (this is boot " + here.boot().orElse("") + "): it proves no reboot";
            default: // UNSUPPORTED_PLATFORM
                return os.self() instanceof ProcessLookup.Unknown u ? u.detail() : reason.toString();
        }
    }

    /** The most of one recorded value a detail quotes: a host name's limit (HOST_NAME_MAX) and then some. */
    static final int SHOWN = 80;

    /**
     * A recorded value as a detail quotes it: whole when short, else its first {@value #SHOWN}
     * characters and how long it was. An identity from a caller's corrupt state file may hold
     * megabytes in any field; the verdict about it stays small.
     */
    static String shown(String recorded) {
        if (recorded.length() <= SHOWN) {
            return recorded;
        }
        return recorded.substring(0, SHOWN) + "… (" + recorded.length() + " characters)";
    }

    /** The words for a reason rows 5 to 9 gave. */
    static String process(Reason reason, Identity id, ProcessLookup lookup, Here here) {
        if (lookup instanceof ProcessLookup.Unknown unknown) {
            return unknown.detail();
        }
        StringBuilder d = new StringBuilder(96).append("pid ").append(id.pid());
        if (!id.name().isEmpty()) {
            d.append(" (").append(shown(id.name())).append(')');
        }
        if (reason == Reason.OTHER_PID_NAMESPACE) {
            d.append(lookup instanceof ProcessLookup.Gone ? " is not in this PID namespace"
                    : " runs another process in this PID namespace");
            return d.append(", and the identity records no namespace while this process is in ")
                    .append(here.pidns().orElse("")).append(", not the initial one: it may come from the host or ")
                    .append("another container").toString();
        }
        if (lookup instanceof ProcessLookup.Gone gone) {
            d.append(" is gone");
            if (!gone.detail().isEmpty()) {
                d.append(": ").append(gone.detail());
            }
            return d.toString();
        }
        ProcessInfo info = ((ProcessLookup.Found) lookup).info();
        switch (reason) {
            case NO_FINGERPRINT:
                d.append(" is running as ").append(info.name()).append(id.start().isEmpty()
                        ? ", but no start fingerprint was recorded to prove it is the same process"
                        : ", but the start recorded, " + shown(id.start()) + ", is no fingerprint this platform writes:"
                        + " it proves nothing");
                break;
            case PID_REUSED:
                d.append(" now belongs to ").append(info.name()).append(" started at ").append(info.start())
                        .append(", not at ").append(shown(id.start()));
                break;
            case ZOMBIE:
                d.append(" has exited and waits to be reaped by its parent");
                break;
            case EXITED:
                d.append(" has exited and is being torn down");
                break;
            default:
                d.append(" is running, started at ").append(info.start());
        }
        return d.toString();
    }
}
