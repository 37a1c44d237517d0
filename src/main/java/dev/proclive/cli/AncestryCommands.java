package dev.proclive.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.proclive.Ancestry;
import dev.proclive.Identity;
import dev.proclive.ProcLive;
import dev.proclive.text.OneLine;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/** The commands that walk this command's ancestry: {@code ancestry} and {@code ancestor}. */
final class AncestryCommands {

    private AncestryCommands() {
    }

    /** {@code ancestry [--of PID]}: {@code {"complete":true,"chain":[…identities…]}}, nearest first. */
    static final class Chain implements Command {
        @Override
        public int run(List<String> args, Io io) {
            Options o = Options.parse("ancestry", args, List.of(Options.Spec.value("--of")), false);
            if (!o.words().isEmpty()) {
                throw new Options.Usage("ancestry: unexpected argument: " + o.words().get(0));
            }
            Ancestry a = o.has("--of") ? ProcLive.ancestry(Arguments.pid(o.value("--of").get())) : ProcLive.ancestry();
            io.out().println(IdentityJson.ancestry(a));
            return ExitCode.OK.code();
        }
    }

    /**
     * {@code ancestor [JSON]}: whether an identity (argument or stdin) is an ancestor of this
     * command. Identities on stdin, one a line (JSON Lines; one line is one identity): each answered,
     * in order, from one snapshot, one line each. Exit 0 when one of them is an ancestor, 1 when
     * each provably is not, 2 otherwise: the same for one line or many. A bad line is 65, naming it,
     * with nothing printed. {@code --nearest}: lines {@code {"key":…,"owner":{…}}}, answered with the
     * key of the nearest ancestor among them ({@link #nearest}).
     */
    static final class Ancestor implements Command {
        @Override
        public int run(List<String> args, Io io) {
            if (args.equals(List.of("--nearest"))) {
                return nearest(io);
            }
            if (args.size() > 1) {
                throw new Options.Usage("ancestor takes at most one JSON argument, or --nearest");
            }
            List<Identity> ids = new ArrayList<>();
            if (!args.isEmpty()) {
                ids.add(Input.identity("ancestor", args.get(0)));
            } else {
                byte[] input = Input.readStdin(io.in());
                List<byte[]> lines = Input.lines(input);
                if (lines.isEmpty()) {
                    ids.add(Input.parse(input)); // says what is wrong with an empty input
                }
                for (int i = 0; i < lines.size(); i++) {
                    try {
                        ids.add(Input.parse(lines.get(i)));
                    } catch (BadInput e) {
                        throw new BadInput(lines.size() == 1 ? e.getMessage() : "line " + (i + 1) + ": " + e.getMessage());
                    }
                }
            }
            Ancestry a = ProcLive.ancestry(); // one walk for every line
            StringBuilder answers = new StringBuilder();
            boolean any = false;
            boolean allNot = true;
            for (Identity id : ids) {
                OptionalInt depth = a.depthOf(id);
                Optional<String> unknown = depth.isPresent() ? Optional.empty() : a.whyUnknown(id);
                any |= depth.isPresent();
                allNot &= depth.isEmpty() && unknown.isEmpty();
                answers.append(IdentityJson.match(depth, unknown)).append('\n');
            }
            io.out().print(answers);
            io.out().flush();
            return any ? ExitCode.OK.code() : allNot ? ExitCode.NO.code() : ExitCode.UNKNOWN.code();
        }

        /**
         * {@code ancestor --nearest}: which session's owner is this command's nearest ancestor, from
         * JSON Lines {@code {"key":"…","owner":{IDENTITY}}}: {@code {"nearest":"KEY","depth":N}}, exit 0;
         * {@code {"nearest":null,"relation":"none"}}, exit 1; {@code "ambiguous"} (with its keys and
         * depth) or {@code "unknown"} (with why), exit 2.
         */
        private static int nearest(Io io) {
            List<byte[]> lines = Input.lines(Input.readStdin(io.in()));
            Map<String, Identity> owners = new LinkedHashMap<>();
            for (int i = 0; i < lines.size(); i++) {
                Map.Entry<String, Identity> e;
                try {
                    e = IdentityJson.keyed(lines.get(i));
                } catch (JsonProcessingException bad) {
                    throw new BadInput("line " + (i + 1) + ": bad JSON: " + Input.oneLine(bad));
                } catch (IOException bad) {
                    throw new BadInput("line " + (i + 1) + ": cannot be read: " + bad.getMessage());
                }
                if (owners.putIfAbsent(e.getKey(), e.getValue()) != null) {
                    throw new BadInput("line " + (i + 1) + ": key " + OneLine.quote(e.getKey()) + " is given twice");
                }
            }
            Ancestry.Nearest<String> n = ProcLive.ancestry().nearest(owners);
            io.out().println(IdentityJson.nearest(n));
            return n instanceof Ancestry.Nearest.Found ? ExitCode.OK.code()
                    : n instanceof Ancestry.Nearest.None ? ExitCode.NO.code() : ExitCode.UNKNOWN.code();
        }
    }
}
