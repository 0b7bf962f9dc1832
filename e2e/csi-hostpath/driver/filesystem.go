package driver

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ParamFilesystem is the StorageClass parameter that makes volumes sized
// filesystems: "ext4" is an ext4 filesystem of exactly the volume's capacity
// on a sparse image file (loop-mounted at the volume's directory), so a full
// volume fails writes with ENOSPC and an expansion grows it online. Without
// it a volume is a plain directory whose capacity is bookkeeping.
const ParamFilesystem = "fs"

// volumeFilesystem checks the parameter.
func volumeFilesystem(params map[string]string) (string, error) {
	switch fs := params[ParamFilesystem]; fs {
	case "", "ext4":
		return fs, nil
	default:
		return "", status.Errorf(codes.InvalidArgument, "parameter %s=%q: want ext4 or nothing", ParamFilesystem, fs)
	}
}

func imagePath(dir string) string { return dir + ".img" }

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// makeFilesystem puts an ext4 filesystem of size bytes at dir (an empty
// directory), writable by any user like a fresh directory volume.
func makeFilesystem(dir string, size int64) error {
	img := imagePath(dir)
	f, err := os.OpenFile(img, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// no blocks reserved for root: the loader does not run as root
		err = run("mkfs.ext4", "-q", "-F", "-m", "0", "-E", "lazy_itable_init=1,lazy_journal_init=1", img)
	}
	if err == nil {
		err = run("mount", "-o", "loop", img, dir)
	}
	if err == nil {
		err = errors.Join(os.Remove(dir+"/lost+found"), os.Chmod(dir, 0o777))
	}
	if err != nil {
		_ = removeFilesystem(dir)
		return err
	}
	return nil
}

// removeFilesystem unmounts dir's filesystem (and its loop device) and
// removes its image.
func removeFilesystem(dir string) error {
	if mounted, _ := isMountPoint(dir); mounted {
		if err := unix.Unmount(dir, 0); err != nil {
			return fmt.Errorf("unmount %s: %w", dir, err)
		}
	}
	if err := os.Remove(imagePath(dir)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// growFilesystem grows dir's filesystem to size bytes, offline: growing a
// mounted ext4 needs CAP_SYS_RESOURCE, which the test machine's root may lack.
// The caller makes sure no pod has the volume published.
func growFilesystem(dir string, size int64) error {
	img := imagePath(dir)
	if err := unix.Unmount(dir, 0); err != nil {
		return fmt.Errorf("unmount %s: %w", dir, err)
	}
	err := os.Truncate(img, size)
	if err == nil {
		// resize2fs wants a freshly checked filesystem; -p repairs what is safe (exit 1)
		if ferr := run("e2fsck", "-f", "-p", img); ferr != nil {
			var exit *exec.ExitError
			if !errors.As(ferr, &exit) || exit.ExitCode() != 1 {
				err = ferr
			}
		}
	}
	if err == nil {
		err = run("resize2fs", img)
	}
	// mounted again even when growing failed: the volume stays usable at its old size
	return errors.Join(err, run("mount", "-o", "loop", img, dir))
}
