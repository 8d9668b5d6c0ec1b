package main

// Pod networking: one Linux bridge on the host, one network namespace + veth pair per pod.
//
//   host:  bridge k6br<N>  10.<N>.0.1/16 (gateway, and where test servers for pods can bind)
//                          10.<N>.0.11, .12, ... /32 (node InternalIPs: kubelet endpoints)
//   pod:   netns k6d<N>-<a>-<b>, eth0 = 10.<N>.<a>.<b>/16, veth peer k6v<N>-<a>-<b> on the bridge
//
// Pods get no default route: they reach only the 10.<N>.0.0/16 addresses on the bridge.
// Every name carries the prefix, so a sweep finds all that an agent made, even after a crash.

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

type podNet struct {
	prefix string // "10.213"
	second int    // 213
	mu     sync.Mutex
	used   map[string]bool
	next   int // next candidate offset in the pod range
}

func newPodNet(prefix string) (*podNet, error) {
	parts := strings.Split(prefix, ".")
	if len(parts) != 2 || parts[0] != "10" {
		return nil, fmt.Errorf("CLUSTER_POD_NET must look like 10.N (a /16 inside 10.0.0.0/8), got %q", prefix)
	}
	second, err := strconv.Atoi(parts[1])
	if err != nil || second < 0 || second > 255 {
		return nil, fmt.Errorf("CLUSTER_POD_NET: bad second octet in %q", prefix)
	}
	return &podNet{prefix: prefix, second: second, used: map[string]bool{}}, nil
}

func (p *podNet) bridge() string      { return fmt.Sprintf("k6br%d", p.second) }
func (p *podNet) nsPrefix() string    { return fmt.Sprintf("k6d%d-", p.second) }
func (p *podNet) vethPrefix() string  { return fmt.Sprintf("k6v%d-", p.second) }
func (p *podNet) gateway() net.IP     { return net.ParseIP(p.prefix + ".0.1") }
func (p *podNet) nodeIP(i int) net.IP { return net.ParseIP(fmt.Sprintf("%s.0.%d", p.prefix, 10+i)) }

func (p *podNet) names(ip net.IP) (netns, veth string) {
	v4 := ip.To4()
	return fmt.Sprintf("%s%d-%d", p.nsPrefix(), v4[2], v4[3]), fmt.Sprintf("%s%d-%d", p.vethPrefix(), v4[2], v4[3])
}

// allocate returns a free pod IP in 10.N.1.1 - 10.N.253.254 (10.N.254.0/24 is the service range).
func (p *podNet) allocate() (net.IP, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	const size = 253 * 256
	for i := 0; i < size; i++ {
		off := (p.next + i) % size
		a, b := 1+off/256, off%256
		if b == 0 || b == 255 {
			continue
		}
		s := fmt.Sprintf("%s.%d.%d", p.prefix, a, b)
		if !p.used[s] {
			p.used[s] = true
			p.next = off + 1
			return net.ParseIP(s), nil
		}
	}
	return nil, fmt.Errorf("pod network %s.0.0/16 is full", p.prefix)
}

func (p *podNet) release(ip net.IP) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.used, ip.String())
}

func run(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func writeSysctl(path, value string) {
	_ = os.WriteFile(path, []byte(value), 0o644)
}

// setupBridge creates the bridge with the gateway and node addresses (idempotent).
func (p *podNet) setupBridge(nodes int) error {
	br := p.bridge()
	if _, err := net.InterfaceByName(br); err != nil {
		if err := run("ip", "link", "add", br, "type", "bridge"); err != nil {
			return err
		}
	}
	writeSysctl("/proc/sys/net/ipv6/conf/"+br+"/disable_ipv6", "1")
	want := []string{p.gateway().String() + "/16"}
	for i := 1; i <= nodes; i++ {
		want = append(want, p.nodeIP(i).String()+"/32")
	}
	iface, _ := net.InterfaceByName(br)
	have := map[string]bool{}
	if iface != nil {
		addrs, _ := iface.Addrs()
		for _, a := range addrs {
			have[a.String()] = true
		}
	}
	for _, a := range want {
		if !have[a] {
			if err := run("ip", "addr", "add", a, "dev", br); err != nil {
				return err
			}
		}
	}
	return run("ip", "link", "set", br, "up")
}

// createSandbox makes the pod's netns and veth with the given IP.
func (p *podNet) createSandbox(ip net.IP) (string, error) {
	ns, veth := p.names(ip)
	steps := [][]string{
		{"ip", "netns", "add", ns},
		{"ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns},
		{"ip", "link", "set", veth, "master", p.bridge()},
	}
	for _, s := range steps {
		if err := run(s...); err != nil {
			p.deleteSandbox(ip)
			return "", err
		}
	}
	writeSysctl("/proc/sys/net/ipv6/conf/"+veth+"/disable_ipv6", "1")
	steps = [][]string{
		{"ip", "link", "set", veth, "up"},
		{"ip", "-n", ns, "addr", "add", ip.String() + "/16", "dev", "eth0"},
		{"ip", "-n", ns, "link", "set", "eth0", "up"},
		{"ip", "-n", ns, "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if err := run(s...); err != nil {
			p.deleteSandbox(ip)
			return "", err
		}
	}
	return ns, nil
}

// deleteSandbox kills whatever still runs in the pod's netns and removes the netns and veth.
func (p *podNet) deleteSandbox(ip net.IP) {
	ns, veth := p.names(ip)
	killNetnsProcesses(ns)
	_ = run("ip", "link", "del", veth)
	_ = run("ip", "netns", "delete", ns)
}

func netnsPids(ns string) []int {
	out, err := exec.Command("ip", "netns", "pids", ns).Output()
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

func killNetnsProcesses(ns string) {
	for i := 0; i < 50; i++ {
		pids := netnsPids(ns)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sweep removes every netns and veth with this network's prefixes, and the bridge if asked.
func (p *podNet) sweep(bridgeToo bool) {
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.HasPrefix(f[0], p.nsPrefix()) {
			killNetnsProcesses(f[0])
			_ = run("ip", "netns", "delete", f[0])
		}
	}
	ifaces, _ := net.Interfaces()
	for _, i := range ifaces {
		if strings.HasPrefix(i.Name, p.vethPrefix()) {
			_ = run("ip", "link", "del", i.Name)
		}
	}
	if bridgeToo {
		if _, err := net.InterfaceByName(p.bridge()); err == nil {
			_ = run("ip", "link", "del", p.bridge())
		}
	}
}
