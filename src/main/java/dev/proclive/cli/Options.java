package dev.proclive.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A command's options, declared once (name, whether it takes a value, whether it may repeat) and
 * parsed before anything is touched: {@code --name value} or {@code --name=value}, positional
 * words, and, where a command allows it, everything after {@code --} as they came. Anything else
 * is bad usage.
 */
final class Options {

    /** Bad usage, said on one line; exit 64. */
    static final class Usage extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Usage(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * One option.
     *
     * @param name       with its dashes: {@code --dir}
     * @param takesValue whether it takes a value
     * @param repeatable whether it may be given more than once
     */
    record Spec(String name, boolean takesValue, boolean repeatable) {
        static Spec flag(String name) {
            return new Spec(name, false, false);
        }

        static Spec value(String name) {
            return new Spec(name, true, false);
        }

        static Spec repeatable(String name) {
            return new Spec(name, true, true);
        }
    }

    private final Map<String, List<String>> values = new LinkedHashMap<>();
    private final List<String> words = new ArrayList<>();
    private final List<String> rest = new ArrayList<>();

    private Options() {
    }

    /**
     * Parses {@code args} for {@code command}.
     *
     * @param dashDash whether {@code --} ends the options and what follows is kept as given
     * @throws Usage naming what is wrong
     */
    static Options parse(String command, List<String> args, List<Spec> specs, boolean dashDash) {
        Options o = new Options();
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (dashDash && arg.equals("--")) {
                o.rest.addAll(args.subList(i + 1, args.size()));
                break;
            }
            if (!arg.startsWith("--") || arg.equals("--")) {
                o.words.add(arg);
                continue;
            }
            int eq = arg.indexOf('=');
            String name = eq < 0 ? arg : arg.substring(0, eq);
            Spec spec = specs.stream().filter(s -> s.name().equals(name)).findFirst()
                    .orElseThrow(() -> new Usage(command + ": unknown option " + name));
            String value = null;
            if (spec.takesValue()) {
                if (eq >= 0) {
                    value = arg.substring(eq + 1);
                } else if (i + 1 < args.size()) {
                    value = args.get(++i);
                } else {
                    throw new Usage(name + " needs a value");
                }
            } else if (eq >= 0) {
                throw new Usage(name + " takes no value");
            }
            List<String> given = o.values.computeIfAbsent(name, n -> new ArrayList<>());
            if (!given.isEmpty() && !spec.repeatable()) {
                throw new Usage(name + " may be given once");
            }
            given.add(value == null ? "" : value);
        }
        return o;
    }

    /** Whether {@code name} was given. */
    boolean has(String name) {
        return values.containsKey(name);
    }

    /** The value of {@code name}, if given. */
    Optional<String> value(String name) {
        List<String> v = values.get(name);
        return v == null ? Optional.empty() : Optional.of(v.get(0));
    }

    /** Every value of a repeatable {@code name}, in order. */
    List<String> values(String name) {
        return values.getOrDefault(name, List.of());
    }

    /** The words that are not options, in order. */
    List<String> words() {
        return words;
    }

    /** What came after {@code --}. */
    List<String> rest() {
        return rest;
    }
}
