package dev.proclive;

/**
 * {@code CheckMain PID START}: prints {@code LIVENESS REASON} for that identity, using nothing but
 * the library itself (no JSON), so it runs on a class path without JNA or Jackson.
 */
public final class CheckMain {

    private CheckMain() {
    }

    public static void main(String[] args) {
        Verdict v = ProcLive.explain(new Identity(Long.parseLong(args[0]), args[1], "", "", "", ""));
        System.out.println(v.liveness() + " " + v.reason());
    }
}
