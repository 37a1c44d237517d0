package dev.proclive.etcd;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.function.Supplier;

/**
 * Reads one watch stream of etcd's gateway, an answer a line: each answer's changes handed on in
 * order, with the header's revision, until {@link #done} completes. A compacted watch ends normally
 * (anything may have changed); a broken one exceptionally, and so does one etcd canceled (it would
 * be canceled again: the caller backs off), one that answers what no watch says, or a member of
 * another cluster than {@code pinned}.
 */
final class WatchStream implements Flow.Subscriber<String> {

    final CompletableFuture<Void> done = new CompletableFuture<>();
    private final ObjectMapper json;
    private final String what;
    private final Supplier<String> pinned;
    private final Etcd.Changes changes;

    WatchStream(ObjectMapper json, String what, Supplier<String> pinned, Etcd.Changes changes) {
        this.json = json;
        this.what = what;
        this.pinned = pinned;
        this.changes = changes;
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
        done.whenComplete((v, e) -> s.cancel()); // done or cancelled: the stream is closed
        s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(String line) {
        if (done.isDone()) {
            return;
        }
        try {
            JsonNode answer = json.readTree(line);
            if (answer == null || !answer.isObject() || !answer.has("result")) {
                throw new IOException(what + " answered what no watch says: "
                        + line.substring(0, Math.min(line.length(), 80)));
            }
            JsonNode result = answer.path("result");
            String id = result.path("header").path("cluster_id").asText("");
            String cluster = pinned.get();
            if (!id.isEmpty() && cluster != null && !cluster.equals(id)) {
                throw new IOException(what + " was answered by a member of etcd cluster " + id
                        + ", not of cluster " + cluster + ", which this store reached first");
            }
            if (result.path("compact_revision").asLong(0) > 0) {
                done.complete(null);
            } else if (result.path("canceled").asBoolean(false)) {
                throw new IOException("etcd canceled " + what + ": "
                        + EtcdGateway.reason(result.path("cancel_reason").asText("no reason given")));
            } else {
                List<Etcd.Change> seen = new ArrayList<>();
                for (JsonNode event : result.path("events")) {
                    seen.add(new Etcd.Change(EtcdGateway.text(event.path("kv").path("key").asText("")),
                            event.path("kv").path("mod_revision").asLong(0)));
                }
                changes.seen(result.path("header").path("revision").asLong(0), seen);
            }
        } catch (IOException | RuntimeException e) {
            done.completeExceptionally(e);
        }
    }

    @Override
    public void onError(Throwable t) {
        done.completeExceptionally(t);
    }

    @Override
    public void onComplete() {
        done.completeExceptionally(new IOException(what + " ended"));
    }
}
