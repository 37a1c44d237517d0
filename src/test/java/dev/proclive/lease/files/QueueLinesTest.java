package dev.proclive.lease.files;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Identity;
import dev.proclive.ProcLive;
import dev.proclive.lease.Acquisition;
import dev.proclive.lease.LeaseStore;
import dev.proclive.lease.book.LeaseBook;
import dev.proclive.lease.book.LeaseJson;
import dev.proclive.platform.Platform;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A directory's queue is one ticket a line. A line that is no ticket (damaged, edited by hand, not UTF-8) costs only
 * its own waiter its place: the others are read in their order.
 */
class QueueLinesTest {

    @TempDir
    Path dir;

    private static LeaseBook.Waiter ticket(long pid) {
        Identity who = new Identity(pid, "1000" + pid, "boot-1", "", "", "");
        return new LeaseBook.Waiter(who, who, Instant.parse("2999-01-01T00:00:00Z"));
    }

    private List<LeaseBook.Waiter> read(byte[] queue) throws Exception {
        Files.write(dir.resolve("build.queue"), queue);
        Identity self = new Identity(1, "1", "boot-1", "", "", "");
        LeaseFiles files = LeaseFiles.open(dir, self, id -> false, false, Platform.fileLocker());
        try {
            return files.locked("build", LeaseBook.Guard::waiters);
        } finally {
            files.close();
        }
    }

    private static void line(ByteArrayOutputStream out, String text) {
        out.writeBytes((text + "\n").getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aLineThatIsNoTicketIsLeftOutAndTheOthersKeepTheirPlaces() throws Exception {
        ByteArrayOutputStream queue = new ByteArrayOutputStream();
        line(queue, LeaseJson.waiter(ticket(101)));
        line(queue, "{\"until\":\"2999-01-01T00:00:00.000Z\",\"who\":{\"pid\":"); // cut short
        line(queue, LeaseJson.waiter(ticket(102)));
        // a ticket but for one byte that is not UTF-8: read loosely, it would name another process
        byte[] notUtf8 = LeaseJson.waiter(ticket(104)).getBytes(StandardCharsets.UTF_8);
        int at = new String(notUtf8, StandardCharsets.ISO_8859_1).indexOf("boot-1") + "boot-".length();
        notUtf8[at - 1] = (byte) 0xC3;
        queue.writeBytes(notUtf8);
        queue.write('\n');
        line(queue, "");
        line(queue, "[]");
        line(queue, LeaseJson.waiter(ticket(105)) + "\r"); // a line ended as on Windows
        queue.writeBytes(LeaseJson.waiter(ticket(103)).getBytes(StandardCharsets.UTF_8)); // the last, unended

        assertThat(read(queue.toByteArray())).as("the tickets, in their order")
                .containsExactly(ticket(101), ticket(102), ticket(105), ticket(103));
    }

    @Test
    void aQueueOfNothingButTicketsIsReadWhole() throws Exception {
        String queue = LeaseJson.waiter(ticket(7)) + "\n" + LeaseJson.waiter(ticket(8)) + "\n";
        assertThat(read(queue.getBytes(StandardCharsets.UTF_8))).containsExactly(ticket(7), ticket(8));
    }

    /** Read under the lease's lock: a file of garbage costs a few failed lines, not one failure a line. */
    @Test
    void pastSixteenLinesThatAreNoTicketTheRestIsNotRead() throws Exception {
        assertThat(read(garbageThen(16, ticket(9)))).as("16 read past").containsExactly(ticket(9));
        assertThat(read(garbageThen(17, ticket(9)))).as("17: the rest not read").isEmpty();
    }

    private static byte[] garbageThen(int lines, LeaseBook.Waiter last) {
        ByteArrayOutputStream queue = new ByteArrayOutputStream();
        for (int i = 0; i < lines; i++) {
            line(queue, "{not a ticket}");
        }
        line(queue, LeaseJson.waiter(last));
        return queue.toByteArray();
    }

    @Test
    void breakRemovesAQueueOfLinesThatAreNoTicket() throws Exception {
        try (LeaseStore store = LeaseStore.open(dir)) {
            assertThat(store.acquire("build", ProcLive.current().orElseThrow())).isInstanceOf(Acquisition.Granted.class);
            Files.writeString(dir.resolve("build.queue"), "{not a ticket}\n{nor this}\n");
            store.breakLease("build");
        }
        assertThat(dir.resolve("build.queue")).doesNotExist();
    }

    @Test
    void aQueueFileOfMoreThanAMebibyteReadsAsEmpty() throws Exception {
        StringBuilder queue = new StringBuilder();
        while (queue.length() <= LeaseJson.MAX_RECORD_BYTES) {
            queue.append(LeaseJson.waiter(ticket(9))).append('\n');
        }
        assertThat(read(queue.toString().getBytes(StandardCharsets.UTF_8))).isEmpty();
    }
}
