package dev.proclive;

/** The baseline of {@code bench/coldstart.sh}: a JVM that starts, prints and exits. */
public final class EmptyMain {

    private EmptyMain() {
    }

    public static void main(String[] args) {
        System.out.println("ALIVE");
    }
}
