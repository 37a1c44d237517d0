package dev.proclive.lease.core;

import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A spawned command's {@link Process}: {@link #waitFor()} and {@link #onExit()} return once the store is done with
 * its end, so a caller then reading the record races no write; {@code destroy} stops the whole tree in its own cgroup.
 */
final class RecordedProcess extends Process {

    private final Process process;
    private final CompletableFuture<Void> recorded;
    private final Tracking tracking;

    /** {@code recorded} completes, normally, only after {@code process} has exited. */
    RecordedProcess(Process process, CompletableFuture<Void> recorded, Tracking tracking) {
        this.process = process;
        this.recorded = recorded;
        this.tracking = tracking;
    }

    @Override
    public int waitFor() throws InterruptedException {
        try {
            recorded.get();
        } catch (ExecutionException never) {
            // it completes normally, always
        }
        return process.waitFor();
    }

    @Override
    public boolean waitFor(long timeout, TimeUnit unit) throws InterruptedException {
        try {
            recorded.get(timeout, unit);
            return true;
        } catch (TimeoutException notYet) {
            return false;
        } catch (ExecutionException never) {
            return process.waitFor(0, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public CompletableFuture<Process> onExit() {
        return recorded.handle((done, never) -> this);
    }

    @Override
    public int exitValue() {
        return process.exitValue();
    }

    @Override
    public boolean isAlive() {
        return process.isAlive();
    }

    @Override
    public OutputStream getOutputStream() {
        return process.getOutputStream();
    }

    @Override
    public InputStream getInputStream() {
        return process.getInputStream();
    }

    @Override
    public InputStream getErrorStream() {
        return process.getErrorStream();
    }

    @Override
    public void destroy() {
        process.destroy();
        tracking.signalAll(15); // SIGTERM
    }

    @Override
    public Process destroyForcibly() {
        process.destroyForcibly();
        tracking.signalAll(9); // SIGKILL
        return this;
    }

    @Override
    public boolean supportsNormalTermination() {
        return process.supportsNormalTermination();
    }

    @Override
    public long pid() {
        return process.pid();
    }

    @Override
    public ProcessHandle toHandle() {
        return process.toHandle();
    }

    @Override
    public String toString() {
        return process.toString();
    }
}
