package pbimport

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// chunkRows is how many records one call (one command) carries: the
// import route's limit.
const chunkRows = 500

// RecordPlan says where the records of one PocketBase collection go.
type RecordPlan struct {
	From   *Collection
	To     string            // the svcd collection
	Rename map[string]string // PocketBase field name -> svcd's, when they differ
	Skip   map[string]bool   // fields the translation dropped
}

// ImportRecords sends the records of p.From to the node, 500 a call, then
// uploads the files of the records it created. A record whose id exists
// is skipped with its files: running the import again changes nothing.
func ImportRecords(ctx context.Context, src *Source, t *Target, p RecordPlan, now time.Time, rep *Report) error {
	cr := CollectionReport{From: p.From.Name, To: p.To, Failed: []string{}, FileFail: []string{}}
	defer func() { rep.Collections = append(rep.Collections, cr) }()
	var batch []Converted
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		rows := make([]ImportRow, len(batch))
		for i, c := range batch {
			rows[i] = c.Row
		}
		var res struct {
			Created []string `json:"created"`
			Skipped []string `json:"skipped"`
			Failed  []struct {
				ID      string         `json:"id"`
				Error   string         `json:"error"`
				Details map[string]any `json:"details"`
			} `json:"failed"`
		}
		if err := t.Do(ctx, "POST", "/admin/import-rows", map[string]any{"collection": p.To, "rows": rows}, &res); err != nil {
			return fmt.Errorf("collection %s: %w", p.To, err)
		}
		cr.Created += len(res.Created)
		cr.Skipped += len(res.Skipped)
		for _, f := range res.Failed {
			d, _ := json.Marshal(f.Details)
			cr.Failed = append(cr.Failed, fmt.Sprintf("%s: %s %s", f.ID, f.Error, d))
		}
		created := map[string]bool{}
		for _, id := range res.Created {
			created[id] = true
		}
		for _, c := range batch {
			if !created[c.Row.ID] {
				continue
			}
			for field, names := range c.Files {
				var files []UploadFile
				for _, name := range names {
					data, err := os.ReadFile(src.FilePath(p.From, c.Row.ID, name))
					if err != nil {
						cr.FileFail = append(cr.FileFail, fmt.Sprintf("%s/%s/%s: %v", c.Row.ID, field, name, err))
						continue
					}
					files = append(files, UploadFile{Name: name, Data: data})
				}
				if len(files) == 0 {
					continue
				}
				if _, err := t.Upload(ctx, p.To, c.Row.ID, field, files); err != nil {
					cr.FileFail = append(cr.FileFail, fmt.Sprintf("%s/%s: %v", c.Row.ID, field, err))
					continue
				}
				cr.Files += len(files)
			}
		}
		batch = batch[:0]
		return nil
	}
	err := src.Records(p.From, func(r Record) error {
		c, err := Convert(p.From, r, p.Rename, p.Skip)
		if err != nil {
			cr.Failed = append(cr.Failed, err.Error())
			return nil
		}
		if c.Row.Created == 0 {
			c.Row.Created, c.Row.Updated = now.Unix(), now.Unix()
		}
		batch = append(batch, c)
		if len(batch) == chunkRows {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}
