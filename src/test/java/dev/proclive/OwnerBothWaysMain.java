package dev.proclive;

import dev.proclive.platform.Platform;

/**
 * Prints the owner of this JVM found both ways, the plain walk's first ({@code null} when it finds
 * none, "left to the general walk" when it cannot tell) and then the general walk's: for
 * {@code PlainHookPathTest}.
 */
public final class OwnerBothWaysMain {

    private OwnerBothWaysMain() {
    }

    public static void main(String[] args) {
        java.util.Optional<Identity> plain = Platform.plainOwner(AncestorWalk.DEFAULT_SKIP_NAMES,
                OwnerResolver.DEFAULT_MAX_DEPTH);
        System.out.println(plain == null ? "left to the general walk" : plain.orElse(null));
        System.out.println(AncestorWalk.owner(LivenessChecker.system(), AncestorWalk.DEFAULT_SKIP,
                OwnerResolver.DEFAULT_MAX_DEPTH, 0, null).orElse(null));
    }
}
