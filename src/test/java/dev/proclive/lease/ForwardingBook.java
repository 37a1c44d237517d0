package dev.proclive.lease;

import dev.proclive.lease.book.LeaseBook;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

/**
 * A book that hands every call to a real one, a default method's too: a test overrides what it
 * counts or breaks.
 */
abstract class ForwardingBook implements LeaseBook {

    final LeaseBook real;

    ForwardingBook(LeaseBook real) {
        this.real = real;
    }

    @Override
    public Optional<LeaseRecord> read(String name) throws IOException {
        return real.read(name);
    }

    @Override
    public Optional<Object> stamp(String name) throws IOException {
        return real.stamp(name);
    }

    @Override
    public Optional<Object> writtenStamp(String name, long fence) {
        return real.writtenStamp(name, fence);
    }

    @Override
    public <T> T locked(String name, Locked<T> work) throws IOException {
        return real.locked(name, work);
    }

    @Override
    public <T> T locked(String name, java.time.Duration most, Locked<T> work) throws IOException {
        return real.locked(name, most, work);
    }

    @Override
    public void stillWaiting(String name) throws IOException {
        real.stillWaiting(name);
    }

    @Override
    public boolean expires() {
        return real.expires();
    }

    @Override
    public void keep(Grant grant) {
        real.keep(grant);
    }

    @Override
    public boolean keeping(String name, long fence) {
        return real.keeping(name, fence);
    }

    @Override
    public void ended(String name, long fence) {
        real.ended(name, fence);
    }

    @Override
    public List<Grant> grants() throws IOException {
        return real.grants();
    }

    @Override
    public Map<String, String> environment() {
        return real.environment();
    }

    @Override
    public Optional<CompletableFuture<Void>> changed(String name) {
        return real.changed(name);
    }

    @Override
    public boolean lost(String name, long fence) {
        return real.lost(name, fence);
    }

    @Override
    public OptionalLong highestFence(String name) throws IOException {
        return real.highestFence(name);
    }

    @Override
    public void close() {
        real.close();
    }
}
