package dev.proclive;

import dev.proclive.platform.Platform;

/**
 * Prints the owner of this JVM found both ways, the plain walk's first ({@code null} when it leaves
 * the answer to the general walk) and then the general walk's: for {@code PlainHookPathTest}.
 */
public final class OwnerBothWaysMain {

    private OwnerBothWaysMain() {
    }

    public static void main(String[] args) {
        System.out.println(Platform.plainOwner(AncestorWalk.DEFAULT_SKIP_NAMES, OwnerResolver.DEFAULT_MAX_DEPTH));
        System.out.println(AncestorWalk.owner(LivenessChecker.system(), AncestorWalk.DEFAULT_SKIP,
                OwnerResolver.DEFAULT_MAX_DEPTH, 0, null).orElse(null));
    }
}
