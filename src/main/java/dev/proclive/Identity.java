package dev.proclive;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;

/**
 * Who a process is: its PID plus what tells it apart from a later process that gets the same
 * PID. Record it with {@link ProcLive#resolveOwner()}, {@link ProcLive#current()} or
 * {@link ProcLive#identify(long)}, keep it wherever you keep state, and later ask
 * {@link ProcLive#check(Identity)}.
 *
 * <p>Every string component is empty, never null, when it was not recorded (the constructor
 * turns null into {@code ""}).
 *
 * <h2>JSON</h2>
 * A plain jackson-databind {@code ObjectMapper} (no module) writes and reads it, also as a
 * field of your own records, in the wire format of the Go package it is compatible with:
 * <pre>{@code {"pid":123,"start":"4567","boot":"…","host":"…","name":"…","pidns":"…","machine":"…"}}</pre>
 * {@code pid} and {@code start} are always written; {@code boot}, {@code host}, {@code name},
 * {@code pidns} and {@code machine} are left out when empty (the Go package ignores
 * {@code machine}, and reads the rest). Unknown fields are ignored and missing ones read as
 * empty (a missing {@code pid} as 0). Malformed input fails with Jackson's
 * {@link com.fasterxml.jackson.core.JsonProcessingException}: a
 * {@link com.fasterxml.jackson.core.JsonParseException} for text that is not JSON, a
 * {@link com.fasterxml.jackson.databind.exc.MismatchedInputException} for JSON of the wrong shape,
 * such as a {@code pid} that is not a 64-bit whole number or a {@code start}, {@code boot},
 * {@code host}, {@code name}, {@code pidns} or {@code machine} that is not a JSON string or null (as strict as Go's
 * {@code encoding/json}: {@code "start":18} is an error, not {@code "18"}). Read bytes, not a
 * decoded {@code String}: Jackson then refuses bytes that are not UTF-8
 * ({@code readValue(byte[], Identity.class)}, or an {@code InputStream}).
 *
 * @param pid   the process id; 0 or less means "no identity"
 * @param start an opaque start-time fingerprint (Linux: field 22 of {@code /proc/PID/stat}, clock
 *              ticks since boot; macOS: {@code seconds.microseconds} of {@code p_starttime};
 *              Windows: the creation FILETIME as a decimal count of 100 ns); compared only for
 *              equality, and only when spelled as the platform writes it (one with a leading zero
 *              or a sign proves nothing: {@link Reason#NO_FINGERPRINT})
 * @param boot  the boot id it was recorded under (Linux), or empty
 * @param host  the host name it was recorded on, as Go's {@code os.Hostname()} returns it
 * @param name  the process name (Linux {@code comm}), for people and logs only
 * @param pidns the PID namespace it was recorded in (Linux: the inode of {@code /proc/self/ns/pid}),
 *              or empty
 * @param machine the machine it was recorded on (Linux {@code /etc/machine-id}; macOS the hardware
 *              UUID), or empty: a host name alone does not tell two machines apart, so an identity
 *              with a machine is judged only on that machine, and one without it assumes host names
 *              are unique among the machines that share it
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonPropertyOrder({"pid", "start", "boot", "host", "name", "pidns", "machine"})
public record Identity(
        @JsonDeserialize(using = PidDeserializer.class) long pid,
        @JsonInclude(JsonInclude.Include.ALWAYS) @JsonDeserialize(using = StrictStringDeserializer.class) String start,
        @JsonDeserialize(using = StrictStringDeserializer.class) String boot,
        @JsonDeserialize(using = StrictStringDeserializer.class) String host,
        @JsonDeserialize(using = StrictStringDeserializer.class) String name,
        @JsonDeserialize(using = StrictStringDeserializer.class) String pidns,
        @JsonDeserialize(using = StrictStringDeserializer.class) String machine) {

    /** Turns null strings into empty ones. */
    public Identity {
        start = start == null ? "" : start;
        boot = boot == null ? "" : boot;
        host = host == null ? "" : host;
        name = name == null ? "" : name;
        pidns = pidns == null ? "" : pidns;
        machine = machine == null ? "" : machine;
    }

    /**
     * An identity that records no machine, as the Go package and earlier versions write them: it
     * assumes host names are unique among the machines that share it.
     */
    public Identity(long pid, String start, String boot, String host, String name, String pidns) {
        this(pid, start, boot, host, name, pidns, "");
    }
}
