package dev.proclive;

import dev.proclive.lease.LeaseStore;
import java.nio.file.Path;

/** Takes a lease with JNA missing from the class path: prints what it got, for JarIT. */
public final class LeaseWithoutJnaMain {

    private LeaseWithoutJnaMain() {
    }

    public static void main(String[] args) {
        try {
            Object a = LeaseStore.open(Path.of(args[0])).acquire("build", ProcLive.current().orElseThrow());
            System.out.println("granted without a lock? " + a);
        } catch (java.io.IOException e) {
            System.out.println("IOException " + e.getMessage());
        } catch (Throwable e) {
            System.out.println("threw " + e);
        }
    }
}
