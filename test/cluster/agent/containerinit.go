package main

// container-init: the first program of every container process.
//
// The agent starts it as `ip netns exec <pod netns> <agent> container-init <spec.json>`, so it
// already runs in the pod's network namespace and in a fresh mount namespace of its own (ip netns
// exec unshares one). It builds the container's view of the file system without touching the
// host's: a tmpfs root that holds a recursive bind of every top-level host directory (or an
// overlay of it, when a mount path must be created inside it), the pod's volumes bind-mounted at
// their mount paths, then chroots into it, sets the hostname, and execs the container's program.
// All of these mounts live in the container's own mount namespace and vanish with its processes.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
)

type initSpec struct {
	Root       string      `json:"root"`    // empty dir on the host: the tmpfs root is mounted here
	Scratch    string      `json:"scratch"` // empty dir on the host: overlay upper/work dirs
	Mounts     []initMount `json:"mounts"`
	WorkingDir string      `json:"workingDir"`
	Hostname   string      `json:"hostname"`
	Argv       []string    `json:"argv"`
	Env        []string    `json:"env"`
}

type initMount struct {
	Source   string `json:"source"` // host path (dir or file)
	Target   string `json:"target"` // path in the container
	ReadOnly bool   `json:"readOnly"`
}

func containerInitMain(specPath string) {
	runtime.LockOSThread()
	if err := containerInit(specPath); err != nil {
		fmt.Fprintf(os.Stderr, "container-init: %v\n", err)
		os.Exit(128)
	}
}

func containerInit(specPath string) error {
	data, err := os.ReadFile(specPath)
	if err != nil {
		return err
	}
	var spec initSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("read %s: %w", specPath, err)
	}
	// Our mount namespace is a copy (ip netns exec made it a slave); make it private.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	R, S := spec.Root, spec.Scratch
	if err := syscall.Mount("tmpfs", R, "tmpfs", 0, "mode=755"); err != nil {
		return fmt.Errorf("mount tmpfs root: %w", err)
	}
	if err := syscall.Mount("tmpfs", S, "tmpfs", 0, "mode=700"); err != nil {
		return fmt.Errorf("mount tmpfs scratch: %w", err)
	}

	// Which top-level directories need an overlay (a path must be created inside them)?
	targets := []string{}
	for _, m := range spec.Mounts {
		targets = append(targets, m.Target)
	}
	if spec.WorkingDir != "" {
		targets = append(targets, spec.WorkingDir)
	}
	overlay := map[string]bool{}
	for _, t := range targets {
		if top := topNeedingOverlay(t); top != "" {
			overlay[top] = true
		}
	}

	entries, err := os.ReadDir("/")
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		src, dst := "/"+name, filepath.Join(R, name)
		st, err := os.Lstat(src)
		if err != nil {
			continue
		}
		switch {
		case st.Mode()&os.ModeSymlink != 0:
			link, err := os.Readlink(src)
			if err != nil {
				return err
			}
			if err := os.Symlink(link, dst); err != nil {
				return err
			}
		case st.IsDir():
			if err := os.Mkdir(dst, st.Mode().Perm()); err != nil {
				return err
			}
			if overlay[name] {
				up, work := filepath.Join(S, name, "up"), filepath.Join(S, name, "work")
				if err := os.MkdirAll(up, 0o755); err != nil {
					return err
				}
				if err := os.MkdirAll(work, 0o755); err != nil {
					return err
				}
				opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", src, up, work)
				if err := syscall.Mount("overlay", dst, "overlay", 0, opts); err != nil {
					return fmt.Errorf("overlay %s (to create a mount path inside it): %w", src, err)
				}
			} else if err := syscall.Mount(src, dst, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
				return fmt.Errorf("bind %s: %w", src, err)
			}
		default:
			f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			f.Close()
			if err := syscall.Mount(src, dst, "", syscall.MS_BIND, ""); err != nil {
				return fmt.Errorf("bind %s: %w", src, err)
			}
		}
	}

	// Open the volume sources before the chroot; mount them from /proc/self/fd after it, so
	// mount paths resolve exactly as the container sees them (symlinks included).
	type srcFD struct {
		m     initMount
		fd    int
		isDir bool
	}
	var srcs []srcFD
	for _, m := range spec.Mounts {
		st, err := os.Stat(m.Source)
		if err != nil {
			return fmt.Errorf("volume source: %w", err)
		}
		fd, err := syscall.Open(m.Source, oPath|syscall.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open %s: %w", m.Source, err)
		}
		srcs = append(srcs, srcFD{m, fd, st.IsDir()})
	}
	// Parents before children.
	sort.SliceStable(srcs, func(i, j int) bool {
		return strings.Count(filepath.Clean(srcs[i].m.Target), "/") < strings.Count(filepath.Clean(srcs[j].m.Target), "/")
	})

	if err := syscall.Chroot(R); err != nil {
		return fmt.Errorf("chroot: %w", err)
	}
	if err := os.Chdir("/"); err != nil {
		return err
	}
	for _, s := range srcs {
		t := s.m.Target
		if s.isDir {
			if err := os.MkdirAll(t, 0o755); err != nil {
				return fmt.Errorf("mount path %s: %w", t, err)
			}
		} else {
			if err := os.MkdirAll(filepath.Dir(t), 0o755); err != nil {
				return fmt.Errorf("mount path %s: %w", t, err)
			}
			if _, err := os.Stat(t); err != nil {
				f, err := os.OpenFile(t, os.O_CREATE|os.O_WRONLY, 0o644)
				if err != nil {
					return fmt.Errorf("mount path %s: %w", t, err)
				}
				f.Close()
			}
		}
		src := fmt.Sprintf("/proc/self/fd/%d", s.fd)
		if err := syscall.Mount(src, t, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
			return fmt.Errorf("bind volume at %s: %w", t, err)
		}
		if s.m.ReadOnly {
			if err := syscall.Mount("", t, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
				return fmt.Errorf("read-only %s: %w", t, err)
			}
		}
		syscall.Close(s.fd)
	}

	wd := spec.WorkingDir
	if wd == "" {
		wd = "/"
	}
	if err := os.MkdirAll(wd, 0o755); err != nil {
		return fmt.Errorf("working dir %s: %w", wd, err)
	}
	if err := os.Chdir(wd); err != nil {
		return fmt.Errorf("working dir %s: %w", wd, err)
	}
	if spec.Hostname != "" {
		// This thread is locked, and exec keeps the calling thread's namespaces.
		if err := syscall.Unshare(syscall.CLONE_NEWUTS); err == nil {
			_ = syscall.Sethostname([]byte(spec.Hostname))
		}
	}
	if err := syscall.Exec(spec.Argv[0], spec.Argv, spec.Env); err != nil {
		return fmt.Errorf("exec %q: %w", spec.Argv[0], err)
	}
	return nil
}

// topNeedingOverlay: when the container path p does not exist on the host but its top-level
// directory does, the host directory holding it must be overlaid so the path can be created
// without writing to the host. Symlinks in the existing part are resolved the host's way.
func topNeedingOverlay(p string) string {
	p = filepath.Clean("/" + p)
	if _, err := os.Stat(p); err == nil {
		return ""
	}
	existing := p
	for existing != "/" {
		if _, err := os.Stat(existing); err == nil {
			break
		}
		existing = filepath.Dir(existing)
	}
	if existing == "/" {
		return "" // the top-level entry is new: it is created in the tmpfs root
	}
	resolved, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return ""
	}
	parts := strings.Split(strings.TrimPrefix(resolved, "/"), "/")
	if parts[0] == "" {
		return ""
	}
	return parts[0]
}

const oPath = 0x200000 // O_PATH on Linux (not in package syscall)
