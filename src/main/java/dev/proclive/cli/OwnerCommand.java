package dev.proclive.cli;

import dev.proclive.Identity;
import dev.proclive.OwnerResolver;
import java.util.List;
import java.util.Optional;

/**
 * {@code owner [--skip NAME]... [--of PID] [--trace]}: the long-lived process this command (or
 * {@code --of PID}) works for, one JSON line; exit 3 when none can be proven. {@code --trace} says
 * each step of the walk on stderr.
 */
final class OwnerCommand implements Command {

    private static final List<Options.Spec> OPTIONS = List.of(Options.Spec.repeatable("--skip"), Options.Spec.value("--of"),
            Options.Spec.flag("--trace"));

    @Override
    public int run(List<String> args, Io io) {
        Options o = Options.parse("owner", args, OPTIONS, false);
        if (!o.words().isEmpty()) {
            throw new Options.Usage("owner: unexpected argument: " + o.words().get(0));
        }
        OwnerResolver resolver = OwnerResolver.builder();
        for (String skip : o.values("--skip")) {
            if (skip.isBlank()) {
                throw new Options.Usage("--skip needs a non-empty NAME");
            }
            resolver = resolver.skip(skip);
        }
        Long of = o.has("--of") ? Arguments.pid(o.value("--of").get()) : null; // no lambda on a hook's path
        Optional<Identity> owner;
        if (o.has("--trace")) {
            List<OwnerResolver.Step> walk = of == null ? resolver.trace() : resolver.traceFor(of);
            for (OwnerResolver.Step step : walk) {
                io.err().println(traceLine(step));
            }
            owner = walk.get(walk.size() - 1).owner();
        } else {
            owner = of == null ? resolver.resolve() : resolver.resolveFor(of);
        }
        if (owner.isEmpty()) { // one wording, traced or not
            Say.line(io.err(), "no owner could be determined"
                    + (o.has("--trace") ? "" : " (proclive owner --trace shows each step of the walk)"));
            return ExitCode.NONE.code();
        }
        return Input.print(owner, io);
    }

    /** One step of {@code owner --trace}: {@code proclive: skipped  4241 hook.sh (exe dash, argv0 sh): why}. */
    static String traceLine(OwnerResolver.Step step) {
        return "proclive: " + step;
    }
}
