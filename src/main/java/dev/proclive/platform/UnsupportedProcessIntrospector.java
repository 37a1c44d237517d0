package dev.proclive.platform;

import dev.proclive.Reason;

import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.ProcessLookup;
import java.util.Optional;

/** For an OS proclive cannot introspect: every process is unknown, nothing is recorded. */
public final class UnsupportedProcessIntrospector implements ProcessIntrospector {

    private final ProcessLookup.Unknown unsupported;

    public UnsupportedProcessIntrospector(String osName) {
        this.unsupported = new ProcessLookup.Unknown(Reason.UNSUPPORTED_PLATFORM,
                "proclive cannot introspect processes on " + (osName.isEmpty() ? "this OS" : osName));
    }

    @Override
    public ProcessLookup lookup(long pid) {
        return unsupported;
    }

    @Override
    public ProcessLookup self() {
        return unsupported;
    }

    @Override
    public Optional<String> bootId() {
        return Optional.empty();
    }

    @Override
    public Optional<String> hostName() {
        return Optional.empty();
    }

    @Override
    public Optional<String> pidNamespace() {
        return Optional.empty();
    }
}
