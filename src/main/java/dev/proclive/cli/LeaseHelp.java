package dev.proclive.cli;

import dev.proclive.lease.LeaseStore;
import java.util.List;
import java.util.Map;

/**
 * A lease action's {@code --help}, made from the action's own option table: its usage line, one
 * line per option (every option described once, here), then what the action says it does.
 */
final class LeaseHelp {

    private LeaseHelp() {
    }

    /**
     * The variable an etcd password may be given in, instead of the command line ({@code ps} shows
     * every argument of a {@code lease run} for its command's whole life); {@code run} removes it
     * from its command's environment. Here, where every option of the lease command line is told.
     */
    static final String PASSWORD_VARIABLE = "PROCLIVE_ETCD_PASSWORD";

    /** How an option reads in help: its argument's name and one line on what it does. */
    private record OptionHelp(String argument, String text) {
    }

    /** Every option of every action, described once: an action's help lists those of its own table. */
    private static final Map<String, OptionHelp> OPTION_HELP = Map.ofEntries(
            Map.entry("--dir", new OptionHelp("DIR", "the leases in this directory (made by a grant)")),
            Map.entry("--etcd", new OptionHelp("URL[,URL]...", "the leases in etcd, in place of --dir")),
            Map.entry("--prefix", new OptionHelp("P", "etcd's key prefix (default " + LeaseStore.DEFAULT_PREFIX + ")")),
            Map.entry("--etcd-ca", new OptionHelp("FILE", "PEM certificates to verify https members with")),
            Map.entry("--etcd-password-file", new OptionHelp("FILE", "its user's password (or " + PASSWORD_VARIABLE + ")")),
            Map.entry("--holder", new OptionHelp("owner|PID", "the process the lease is for (default: owner)")),
            Map.entry("--skip", new OptionHelp("NAME", "a wrapper the owner walk also passes over")),
            Map.entry("--ttl", new OptionHelp("SECONDS", "how long a grant lasts unrenewed (default 30)")),
            Map.entry("--take-unknown", new OptionHelp("", "take an undecided lease once its TTL has passed")),
            Map.entry("--wait", new OptionHelp("SECONDS", "wait that long for a live holder to end")),
            Map.entry("--print", new OptionHelp("fence", "print only the fence, and only when granted")),
            Map.entry("--fence", new OptionHelp("N", "the fence the grant was given")),
            Map.entry("--on-lost", new OptionHelp("term|warn", "lease lost: SIGTERM the command (default), or warn")));

    /**
     * The help of action {@code action}: {@code named} whether it takes a NAME, {@code options} its
     * option table, {@code about} what it does and its exit codes, {@code trailer} what follows the
     * options on the usage line.
     */
    static String of(String action, boolean named, List<Options.Spec> options, String about, String trailer) {
        StringBuilder usage = new StringBuilder("usage: proclive lease ").append(action)
                .append(named ? " NAME (--dir DIR | --etcd URL[,URL]...)" : " --etcd URL[,URL]...");
        StringBuilder lines = new StringBuilder();
        for (Options.Spec spec : options) {
            OptionHelp h = OPTION_HELP.get(spec.name());
            String shown = spec.name() + (h.argument().isEmpty() ? "" : " " + h.argument());
            if (spec.name().equals("--fence")) {
                usage.append(' ').append(shown); // renew and release need it: no brackets
            } else if (!spec.name().equals("--dir") && !spec.name().equals("--etcd")) {
                usage.append(" [").append(shown).append(']').append(spec.repeatable() ? "..." : "");
            }
            if (!named && spec.name().equals("--dir")) {
                continue;
            }
            lines.append(String.format("%n  %-22s %s", shown, h.text()));
        }
        // what follows the options stays on one line: \u0000 holds its spaces while the line is broken
        return new StringBuilder(wrap(usage.append(trailer.replace(' ', '\u0000')).toString()).toString()
                .replace('\u0000', ' ')).append(System.lineSeparator()).append(about.strip().indent(2).stripTrailing())
                .append(System.lineSeparator()).append("options:").append(lines).toString();
    }

    /**
     * {@code line} broken into lines of at most 80 columns, the ones after the first indented, at
     * spaces that stand outside brackets (an option and its argument stay together).
     */
    private static StringBuilder wrap(String line) {
        StringBuilder b = new StringBuilder();
        int width = 0;
        for (String word : line.split(" (?![^\\[(]*[\\])])")) {
            if (width > 0 && width + 1 + word.length() > 80) {
                b.append(System.lineSeparator()).append("       ");
                width = 7;
            } else if (width > 0) {
                b.append(' ');
                width++;
            }
            b.append(word);
            width += word.length();
        }
        return b;
    }
}
