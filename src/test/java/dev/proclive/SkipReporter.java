package dev.proclive;

import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

/**
 * Prints every test that did not run, and why, to the build's console: a disabled condition
 * ({@code @EnabledOnOs}) and an assumption that failed ({@code assumeTrue(cond, "why")}) alike.
 * A skip nobody sees is a test that silently vanished. Registered through
 * {@code META-INF/services} for both the unit and the integration test runs.
 */
public final class SkipReporter implements TestExecutionListener {

    @Override
    public void executionSkipped(TestIdentifier test, String reason) {
        report(test, reason);
    }

    @Override
    public void executionFinished(TestIdentifier test, TestExecutionResult result) {
        if (result.getStatus() == TestExecutionResult.Status.ABORTED) {
            report(test, result.getThrowable().map(Throwable::getMessage).orElse("aborted"));
        }
    }

    private static void report(TestIdentifier test, String reason) {
        System.out.println("[SKIPPED] " + test.getLegacyReportingName() + " in " + test.getUniqueId()
                .replaceAll(".*\\[class:([^\\]]+)\\].*", "$1") + ": " + reason);
    }
}
