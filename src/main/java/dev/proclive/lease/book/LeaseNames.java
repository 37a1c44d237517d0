package dev.proclive.lease.book;

import dev.proclive.text.OneLine;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The names every layer of the lease agrees on: the rule a lease name follows, and the variables
 * a spawned process finds its reservation and its store in (a book names its own store's: the
 * directory here, a key-value store's endpoints and prefix in its book). The store's facade exports them as its
 * public constants.
 */
public final class LeaseNames {

    public static final String TOKEN_VARIABLE = "PROCLIVE_LEASE_TOKEN";
    public static final String NAME_VARIABLE = "PROCLIVE_LEASE_NAME";
    /** The store's directory, absolute. */
    public static final String DIR_VARIABLE = "PROCLIVE_LEASE_DIR";
    public static final String FENCE_VARIABLE = "PROCLIVE_LEASE_FENCE";

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9._-]{0,127}");

    private LeaseNames() {
    }

    /**
     * Refuses (an {@code IllegalArgumentException} naming the rule; null, a {@code NullPointerException})
     * what is not a lease name, touching nothing: 1 to 128 of {@code [A-Za-z0-9._-]}, not starting
     * with {@code .} or {@code -}.
     */
    public static void checkName(String name) {
        Objects.requireNonNull(name, "name");
        if (!isName(name)) {
            throw new IllegalArgumentException("a lease name is 1 to 128 of [A-Za-z0-9._-], not starting with"
                    + " '.' or '-': " + OneLine.quote(name));
        }
    }

    /** Whether {@code name} is a lease name ({@link #checkName}). */
    public static boolean isName(String name) {
        return NAME.matcher(name).matches();
    }

    /**
     * The lease whose command a cgroup this library made for the store tagged {@code store}
     * ({@code …/proclive.NAME.STORE.HEX}, {@link #storeTag}) was made for; empty when the path is
     * not one, or is another store's.
     */
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

    /**
     * A short tag for the store whose spawned commands' environment adds {@code environment} (its
     * directory, or its key-value store's endpoints and prefix): 8 hex digits of their SHA-256, so that the
     * cgroups one store makes are told from another's under the same parent.
     */
    public static String storeTag(java.util.Map<String, String> environment) {
        StringBuilder all = new StringBuilder();
        new java.util.TreeMap<>(environment).forEach((k, v) -> all.append(k).append('=').append(v).append('\n'));
        return Records.digest(all.toString()).substring(0, 8);
    }
}
