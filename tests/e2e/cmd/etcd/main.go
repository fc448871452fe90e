// etcd v3.7.0, the version k8s.io/kubernetes v1.37.2's go.mod requires
// (go.etcd.io/etcd/server/v3 v3.7.0): the upstream entry point, as
// go.etcd.io/etcd/server/v3's own main.go calls it.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
