package harness

import (
	"bytes"
	"context"
	"mime/multipart"
)

// Upload sends data as one file part of a multipart/form-data POST to
// path: form field field, file name name (svcd's files endpoint takes the
// form field "file"). Like Do, a non-nil error means no HTTP answer was
// received.
func (c *Client) Upload(ctx context.Context, path, field, name string, data []byte) (*Response, error) {
	var buf bytes.Buffer
	buf.Grow(len(data) + 512)
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile(field, name)
	if err != nil {
		return nil, err
	}
	fw.Write(data) // a bytes.Buffer does not fail
	if err := mw.Close(); err != nil {
		return nil, err
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return c.send(ctx, "POST", path, &buf, mw.FormDataContentType())
}
