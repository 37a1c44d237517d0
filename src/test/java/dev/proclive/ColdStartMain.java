package dev.proclive;

/**
 * What a hook does in a fresh JVM: resolve its owner and check it once. Started as a child
 * process by {@code ColdStartIT} and by {@code bench/coldstart.sh}.
 */
public final class ColdStartMain {

    private ColdStartMain() {
    }

    public static void main(String[] args) {
        Identity owner = ProcLive.resolveOwner().orElse(null);
        Liveness liveness = owner == null ? Liveness.UNKNOWN : ProcLive.check(owner);
        System.out.println(liveness);
    }
}
