package dev.proclive.platform;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.posix.Flock;
import dev.proclive.windows.ChannelLocker;
import org.junit.jupiter.api.Test;

/** The one platform switch: os.name to an OS, an OS to its implementations. */
class PlatformTest {

    @Test
    void osNamesMapToTheOsesProcliveTellsApart() {
        assertThat(Platform.os("Linux")).isEqualTo(Platform.Os.LINUX);
        assertThat(Platform.os("Mac OS X")).isEqualTo(Platform.Os.MAC);
        assertThat(Platform.os("Darwin")).isEqualTo(Platform.Os.MAC);
        assertThat(Platform.os("Windows Server 2022")).isEqualTo(Platform.Os.WINDOWS);
        assertThat(Platform.os("FreeBSD")).isEqualTo(Platform.Os.OTHER);
        assertThat(Platform.os("")).isEqualTo(Platform.Os.OTHER);
    }

    @Test
    void thisOsIsTheOneOsNameSays() {
        assertThat(Platform.os()).isEqualTo(Platform.os(System.getProperty("os.name")));
    }

    @Test
    void windowsLocksWithLockFileExEveryOtherOsWithFlock() {
        assertThat(Platform.fileLocker(Platform.Os.WINDOWS)).isInstanceOf(ChannelLocker.class);
        assertThat(Platform.fileLocker(Platform.Os.LINUX)).isNotInstanceOf(ChannelLocker.class);
        assertThat(Platform.fileLocker(Platform.Os.MAC)).isNotInstanceOf(ChannelLocker.class);
        assertThat(Flock.class.getPackageName()).isEqualTo("dev.proclive.posix");
    }
}
