package backup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"svcd/engine"
	"svcd/fsm"
)

// applyRestore resolves the restore command at index to the file it
// installs. The file must be on this node under its digest: when it is
// not (the node was away while it was copied), or it no longer matches
// its digest, a fetch from a peer starts and the entry waits (a transient
// stall) until it is here.
func (b *Backups) applyRestore(cmd fsm.Command, index uint64) (fsm.Replacement, error) {
	cp, err := engine.DecodeCmd[restoreCmd](cmd)
	if err != nil {
		return fsm.Replacement{}, err
	}
	c := *cp
	if c.SchemaVersion > b.core.SchemaVersion() {
		return fsm.Replacement{}, fmt.Errorf("%w: the backup's internal schema version %d is newer than this binary's %d: upgrade svcd",
			fsm.ErrHalt, c.SchemaVersion, b.core.SchemaVersion())
	}
	src := filepath.Join(b.dir, sourceName(c.SHA256))
	if err := b.checkSource(src, c); err != nil {
		// This node was away when the file was copied: fetch it now
		// (the entry waits for it anyway), and when no peer can give it
		// yet, stall and keep trying in the background.
		if ferr := b.fetchNow(c); ferr == nil {
			err = b.checkSource(src, c)
		}
		if err != nil {
			b.fetchLater(c)
			return fsm.Replacement{}, fmt.Errorf("%w: the backup %s of the restore at index %d: %v; fetching it from a peer",
				fsm.ErrNotReady, sourceName(c.SHA256), index, err)
		}
	}
	aside := filepath.Join(b.dir, asidePrefix+strconv.FormatUint(index, 10)+".db")
	return fsm.Replacement{
		Source: src,
		Aside:  aside,
		Prepare: func(tx *fsm.Tx) error {
			return b.core.PrepareRestored(tx, engine.RestoreContext{Now: c.Now})
		},
		Result: &RestoreResult{Index: index, BackupIndex: c.BackupIndex, SchemaVersion: c.SchemaVersion,
			SHA256: c.SHA256, Size: c.Size, Previous: b.relName(aside)},
	}, nil
}

// checkSource verifies that the file at src is the command's.
func (b *Backups) checkSource(src string, c restoreCmd) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if fi.Size() != c.Size {
		return fmt.Errorf("%d bytes, not %d", fi.Size(), c.Size)
	}
	sum, err := fileSHA256(src)
	if err != nil {
		return err
	}
	if sum != c.SHA256 {
		// Damaged here: set it aside and fetch an intact copy.
		os.Rename(src, src+".damaged")
		return errors.New("its bytes no longer match their digest")
	}
	return nil
}

// fetchWait bounds the fetch the apply path makes itself before it
// stalls and leaves the fetch to the background.
const fetchWait = time.Minute

// fetchNow fetches the command's file from a peer, waiting for it.
func (b *Backups) fetchNow(c restoreCmd) error {
	if b.peers == nil {
		return errors.New("no peers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), fetchWait)
	defer cancel()
	if err := b.peers.Fetch(ctx, b.dir, sourceName(c.SHA256), c.SHA256); err != nil {
		return err
	}
	b.log.Info("backup: fetched the file of a restore from a peer", "sha256", c.SHA256)
	return nil
}

// fetchRetry is the pause between two attempts at fetching a restore's
// file that no peer could give.
const fetchRetry = 2 * time.Second

// fetchLater starts fetching the command's file from a peer, unless a
// fetch of it runs already. The apply path retries the entry by itself.
func (b *Backups) fetchLater(c restoreCmd) {
	if b.peers == nil {
		return
	}
	b.fetchMu.Lock()
	defer b.fetchMu.Unlock()
	if b.fetching[c.SHA256] {
		return
	}
	b.fetching[c.SHA256] = true
	go func() {
		defer func() {
			b.fetchMu.Lock()
			delete(b.fetching, c.SHA256)
			b.fetchMu.Unlock()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		if err := b.peers.Fetch(ctx, b.dir, sourceName(c.SHA256), c.SHA256); err != nil {
			b.log.Warn("backup: fetching the file of a restore from the peers failed; retrying", "sha256", c.SHA256, "err", err)
			time.Sleep(fetchRetry)
			return
		}
		b.log.Info("backup: fetched the file of a restore from a peer", "sha256", c.SHA256)
	}()
}
