package dev.proclive.lease.book;

import dev.proclive.text.OneLine;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The names every layer agrees on: the lease name rule, and the variables a spawned process finds its
 * reservation in (a book names its own store's). The store's facade exports them as public constants.
 */
public final class LeaseNames {

    public static final String TOKEN_VARIABLE = "PROCLIVE_LEASE_TOKEN";
    public static final String NAME_VARIABLE = "PROCLIVE_LEASE_NAME";
    /** The store's directory, absolute. */
    public static final String DIR_VARIABLE = "PROCLIVE_LEASE_DIR";
    public static final String FENCE_VARIABLE = "PROCLIVE_LEASE_FENCE";
    /** How the verdict of a refusal over a lease without a record begins: its record then stands in, never written. */
    public static final String NO_RECORD = "no record";

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9._-]{0,127}");

    private LeaseNames() {
    }

    /** Throws {@code IllegalArgumentException} naming the rule (null: {@code NullPointerException}). */
    public static void checkName(String name) {
        Objects.requireNonNull(name, "name");
        if (!isName(name)) {
            throw new IllegalArgumentException("a lease name is 1 to 128 of [A-Za-z0-9._-], not starting with"
                    + " '.' or '-': " + OneLine.quote(name));
        }
    }

    public static boolean isName(String name) {
        return NAME.matcher(name).matches();
    }

    /** The NAME of a cgroup {@code …/proclive.NAME.STORE.HEX} of store tag {@code store}; else empty. */
    public static Optional<String> ofCgroup(String cgroup, String store) {
        Path last = Path.of(cgroup).getFileName();
        String dir = last == null ? "" : last.toString();
        String tail = "." + store + ".";
        int random = dir.lastIndexOf('.');
        int tagged = random < 0 ? -1 : dir.lastIndexOf(tail, random);
        if (!dir.startsWith("proclive.") || tagged <= "proclive.".length() || tagged + tail.length() - 1 != random) {
            return Optional.empty();
        }
        String name = dir.substring("proclive.".length(), tagged);
        return isName(name) ? Optional.of(name) : Optional.empty();
    }

    /** Tells one store's cgroups from another's under the same parent: from its spawned commands' variables. */
    public static String storeTag(java.util.Map<String, String> environment) {
        StringBuilder all = new StringBuilder();
        new java.util.TreeMap<>(environment).forEach((k, v) -> all.append(k).append('=').append(v).append('\n'));
        return Records.digest(all.toString()).substring(0, 8);
    }
}
