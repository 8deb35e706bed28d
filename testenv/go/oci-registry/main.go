// oci-registry: the local control plane's OCI registry (go-containerregistry's registry package:
// the OCI distribution API over plain HTTP, everything in memory), and a pusher of directories as
// Flux OCI artifacts, the format `flux push artifact` writes and Flux's OCIRepository reads.
//
//	oci-registry serve -addr 127.0.0.1:PORT
//	oci-registry push -dir DIR -ref 127.0.0.1:PORT/REPOSITORY:TAG [-source URL] [-revision REV] [-created RFC3339]
//
// push prints the pushed manifest's digest (sha256:...) on standard output. The artifact is
// Flux's: an OCI image manifest whose config has the media type
// application/vnd.cncf.flux.config.v1+json, one layer application/vnd.cncf.flux.content.v1.tar+gzip
// (DIR's files and directories, relative paths, owner, group and times cleared, in lexical order,
// so the same tree gives the same layer), and the annotations org.opencontainers.image.created,
// .source and .revision on the manifest.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Media types and annotations of a Flux OCI artifact (github.com/fluxcd/pkg/oci).
const (
	fluxConfigMediaType  types.MediaType = "application/vnd.cncf.flux.config.v1+json"
	fluxContentMediaType types.MediaType = "application/vnd.cncf.flux.content.v1.tar+gzip"
	createdAnnotation                    = "org.opencontainers.image.created"
	sourceAnnotation                     = "org.opencontainers.image.source"
	revisionAnnotation                   = "org.opencontainers.image.revision"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("oci-registry: ")
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "push":
		err = push(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		log.Fatal(err)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: oci-registry serve -addr 127.0.0.1:PORT")
	fmt.Fprintln(os.Stderr, "       oci-registry push -dir DIR -ref HOST:PORT/REPOSITORY:TAG [-source URL] [-revision REV] [-created RFC3339]")
	os.Exit(2)
}

func serve(args []string) error {
	flags := flag.NewFlagSet("serve", flag.ExitOnError)
	addr := flags.String("addr", "", "address to listen on (a loopback one: 127.0.0.1:PORT)")
	_ = flags.Parse(args)
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		return fmt.Errorf("-addr %q: %w", *addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-addr %q: only a loopback address is served", *addr)
	}
	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	log.Printf("serving the OCI distribution API on http://%s (in memory)", *addr)
	server := &http.Server{
		Handler:           registry.New(registry.Logger(log.New(os.Stderr, "", log.LstdFlags))),
		ReadHeaderTimeout: 10 * time.Second,
	}
	return server.Serve(listener)
}

func push(args []string) error {
	flags := flag.NewFlagSet("push", flag.ExitOnError)
	dir := flags.String("dir", "", "directory whose contents become the artifact")
	ref := flags.String("ref", "", "where to push: HOST:PORT/REPOSITORY:TAG (plain HTTP)")
	source := flags.String("source", "", "the org.opencontainers.image.source annotation")
	revision := flags.String("revision", "", "the org.opencontainers.image.revision annotation")
	created := flags.String("created", "", "the creation time, RFC 3339 (default: now)")
	_ = flags.Parse(args)
	if *dir == "" || *ref == "" {
		usage()
	}
	target, err := name.ParseReference(*ref, name.Insecure, name.StrictValidation)
	if err != nil {
		return fmt.Errorf("-ref %q: %w", *ref, err)
	}
	when := time.Now().UTC()
	if *created != "" {
		if when, err = time.Parse(time.RFC3339, *created); err != nil {
			return fmt.Errorf("-created %q: %w", *created, err)
		}
	}
	content, err := tarGz(*dir)
	if err != nil {
		return fmt.Errorf("archiving %s: %w", *dir, err)
	}

	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, fluxConfigMediaType)
	config, err := img.ConfigFile()
	if err != nil {
		return err
	}
	config.Created = v1.Time{Time: when}
	if img, err = mutate.ConfigFile(img, config); err != nil {
		return err
	}
	img, ok := mutate.Annotations(img, map[string]string{
		createdAnnotation:  when.Format(time.RFC3339),
		sourceAnnotation:   *source,
		revisionAnnotation: *revision,
	}).(v1.Image)
	if !ok {
		return errors.New("annotating the artifact did not give an image")
	}
	if img, err = mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(content, fluxContentMediaType)}); err != nil {
		return err
	}
	if err := remote.Write(target, img); err != nil {
		return fmt.Errorf("pushing to %s: %w", target, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Println(digest.String())
	return nil
}

// tarGz archives the files and directories under dir (not dir itself) with paths relative to
// it, in lexical order, without owners or times. Anything else (symlinks, devices) is refused.
func tarGz(dir string) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(dir, func(path string, entry fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		info, err := entry.Info()
		if err != nil {
			return err
		}
		header := &tar.Header{Name: filepath.ToSlash(rel), ModTime: time.Unix(0, 0).UTC(), Format: tar.FormatPAX}
		switch {
		case info.IsDir():
			header.Typeflag, header.Name, header.Mode = tar.TypeDir, header.Name+"/", 0o755
			return tw.WriteHeader(header)
		case info.Mode().IsRegular():
			header.Typeflag, header.Mode, header.Size = tar.TypeReg, 0o644, info.Size()
			if info.Mode()&0o111 != 0 {
				header.Mode = 0o755
			}
			if err := tw.WriteHeader(header); err != nil {
				return err
			}
			file, err := os.Open(path)
			if err != nil {
				return err
			}
			defer file.Close()
			_, err = io.Copy(tw, file)
			return err
		default:
			return fmt.Errorf("%s is neither a regular file nor a directory", path)
		}
	})
	if err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
