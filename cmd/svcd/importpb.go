package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"svcd/internal/pbimport"
)

// svcd import-pocketbase carries a PocketBase app's data (a pb_data
// directory, or one packed with tar czf) to a running node over its API,
// as an owner: collections translated, records with their ids, times and
// password hashes, files, superusers as admins (--superuser-role), OAuth2
// links. Everything goes through the cluster's log like any write;
// running it again changes nothing (docs/pocketbase.md).

type importPBOptions struct {
	url, report, superuserRole string
	dryRun                     bool
}

func importPBFlagSet(o *importPBOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("import-pocketbase", flag.ContinueOnError)
	fs.StringVar(&o.url, "url", os.Getenv("SVC_URL"), "the node to import into, with an owner's token in SVC_TOKEN (SVC_URL; default http://127.0.0.1:8090)")
	fs.StringVar(&o.report, "report", "", "also write the report as JSON to this file")
	fs.BoolVar(&o.dryRun, "dry-run", false, "translate and report, write nothing")
	fs.StringVar(&o.superuserRole, "superuser-role", "developer", "the admin role PocketBase's superusers get: viewer, editor, developer or owner")
	return fs
}

// importTimeout bounds a whole import.
const importTimeout = 12 * time.Hour

func runImportPocketBase(args []string) error {
	return importPocketBase(args, os.Stdout)
}

func importPocketBase(args []string, stdout io.Writer) error {
	var o importPBOptions
	fs := importPBFlagSet(&o)
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErrorf("give one pb_data directory (or a .tar.gz of one)")
	}
	switch o.superuserRole {
	case "viewer", "editor", "developer", "owner":
	default:
		return usageErrorf("--superuser-role must be viewer, editor, developer or owner")
	}
	tok := os.Getenv("SVC_TOKEN")
	if tok == "" && !o.dryRun {
		return usageErrorf("an owner's token (an admin token or an API token with the admin scope) is needed in SVC_TOKEN")
	}
	if o.url == "" {
		o.url = "http://127.0.0.1:8090"
	}
	path := fs.Arg(0)
	if strings.HasSuffix(path, ".tar.gz") || strings.HasSuffix(path, ".tgz") {
		tmp, err := os.MkdirTemp("", "svcd-pb-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if path, err = pbimport.Unpack(path, tmp); err != nil {
			return err
		}
	}
	src, err := pbimport.Open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	ctx, cancel := context.WithTimeout(context.Background(), importTimeout)
	defer cancel()
	rep, err := pbimport.Import(ctx, src, &pbimport.Target{URL: o.url, Token: tok}, pbimport.Options{DryRun: o.dryRun, Now: time.Now(), SuperuserRole: o.superuserRole})
	if rep != nil {
		printImportReport(stdout, rep, o.dryRun)
		if o.report != "" {
			b, _ := json.MarshalIndent(rep, "", "  ")
			if werr := os.WriteFile(o.report, append(b, '\n'), 0o600); werr != nil && err == nil {
				err = werr
			}
		}
	}
	if err != nil {
		return fmt.Errorf("import-pocketbase: %w", err)
	}
	if rep.Partial() {
		return fmt.Errorf("import-pocketbase: some records, files, superusers or OAuth2 links did not come across (listed above); fix them and run it again: what came across is skipped")
	}
	return nil
}

func printImportReport(w io.Writer, rep *pbimport.Report, dry bool) {
	if dry {
		fmt.Fprintln(w, "dry run: nothing was written")
	}
	for _, c := range rep.Collections {
		to := c.To
		if to != c.From {
			to = c.From + " -> " + c.To
		}
		if dry {
			fmt.Fprintf(w, "%s\n", to)
			continue
		}
		fmt.Fprintf(w, "%s: %d created, %d skipped (they exist), %d failed, %d files\n", to, c.Created, c.Skipped, len(c.Failed)+len(c.FileFail), c.Files)
		for _, f := range append(c.Failed, c.FileFail...) {
			fmt.Fprintf(w, "  failed: %s\n", f)
		}
	}
	for _, a := range []struct {
		what string
		r    *pbimport.AccountsReport
	}{{"superusers (svcd admins)", rep.Superusers}, {"OAuth2 links", rep.OAuth2Links}} {
		if a.r == nil {
			continue
		}
		fmt.Fprintf(w, "%s: %d created, %d skipped (they exist), %d failed\n", a.what, len(a.r.Created), len(a.r.Skipped), len(a.r.Failed))
		for _, n := range a.r.Created {
			fmt.Fprintf(w, "  created: %s\n", n)
		}
		for _, n := range a.r.Skipped {
			fmt.Fprintf(w, "  skipped: %s\n", n)
		}
		for _, f := range a.r.Failed {
			fmt.Fprintf(w, "  failed: %s\n", f)
		}
	}
	if len(rep.Problems) > 0 {
		fmt.Fprintln(w, "not carried over as it was:")
		for _, p := range rep.Problems {
			fmt.Fprintf(w, "  - %s\n", p)
		}
	}
}
