package dev.proclive;

import dev.proclive.spi.internal.KernelIntrospector;
import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import dev.proclive.spi.internal.ProgramNames;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/** A process table in memory, counting what is read. */
class FakeIntrospector implements KernelIntrospector {

    static final String HOST = "here";
    static final String BOOT = "boot-1";
    static final String PIDNS = "4026531836";

    Optional<String> host = Optional.of(HOST);
    Optional<String> boot = Optional.of(BOOT);
    Optional<String> pidns = Optional.of(PIDNS);
    /** None by default, as an introspector that does not know one answers. */
    Optional<String> machine = Optional.empty();
    ProcessLookup self = new ProcessLookup.Found(new ProcessInfo(50, 40, "java", "500", ProcessState.LIVE));
    final Map<Long, ProcessLookup> table = new java.util.concurrent.ConcurrentHashMap<>();
    final Map<Long, ProgramNames> programs = new HashMap<>();
    /** Lookups made, by any thread (an exit watch's poller too). */
    volatile int lookups;
    int selfReads;
    int programNameReads;

    /** Process {@code pid} also runs executable {@code exe} with {@code argv0} ("" for unreadable). */
    FakeIntrospector names(long pid, String exe, String argv0) {
        programs.put(pid, new ProgramNames(exe, argv0));
        return this;
    }

    @Override
    public ProgramNames programNames(long pid) {
        programNameReads++;
        return programs.getOrDefault(pid, ProgramNames.UNKNOWN);
    }

    FakeIntrospector process(long pid, long ppid, String name, String start) {
        return put(pid, new ProcessLookup.Found(new ProcessInfo(pid, ppid, name, start, ProcessState.LIVE)));
    }

    FakeIntrospector put(long pid, ProcessLookup lookup) {
        table.put(pid, lookup);
        return this;
    }

    @Override
    public ProcessLookup lookup(long pid) {
        lookups++;
        return table.getOrDefault(pid, new ProcessLookup.Gone("not in the fake table"));
    }

    @Override
    public ProcessLookup self() {
        selfReads++;
        return self;
    }

    @Override
    public Optional<String> bootId() {
        return boot;
    }

    @Override
    public Optional<String> hostName() {
        return host;
    }

    @Override
    public Optional<String> machineId() {
        return machine;
    }

    @Override
    public Optional<String> pidNamespace() {
        return pidns;
    }

    /** As Linux answers it: the initial namespace is inode 4026531836; unreadable counts as initial. */
    @Override
    public boolean inInitialPidNamespace() {
        return pidns.map(PIDNS::equals).orElse(true);
    }
}
