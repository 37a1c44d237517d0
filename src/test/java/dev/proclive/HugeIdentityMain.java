package dev.proclive;

/**
 * {@code HugeIdentityMain MIB}: explains identities whose recorded values are each {@code MIB}
 * MiB long (as a caller's corrupt state file could hold), one per field, and prints each reason
 * and detail length: run under a small heap, the verdicts must stay small.
 */
public final class HugeIdentityMain {

    private HugeIdentityMain() {
    }

    public static void main(String[] args) {
        String huge = "é".repeat(Integer.parseInt(args[0]) << 20); // not Latin-1: two bytes a char
        Identity self = ProcLive.current().orElseThrow();
        Identity[] corrupt = {
            new Identity(self.pid(), self.start(), "", huge, "", "", ""),
            new Identity(self.pid(), self.start(), "", self.host(), "", "", huge),
            new Identity(self.pid(), self.start(), "", "", "", huge, ""),
            new Identity(self.pid(), self.start(), huge, "", "", "", ""),
            new Identity(self.pid(), huge, "", "", huge, "", ""),
        };
        for (int i = 0; i < corrupt.length; i++) {
            Verdict v = ProcLive.explain(corrupt[i]);
            corrupt[i] = null;
            System.out.println(v.reason() + " " + v.detail().length());
        }
    }
}
