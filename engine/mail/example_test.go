package mail_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"svcd/engine/mail"
)

// postWith adapts an *http.Client (in svcd, the SSRF-guarded one) to the
// HTTP transport's PostFunc. The mail package itself does not import
// net/http.
func postWith(client *http.Client) mail.PostFunc {
	return func(ctx context.Context, url string, header map[string]string, body []byte) (int, []byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return resp.StatusCode, b, nil
	}
}

// The HTTP transport posts through the caller's client.
func ExamplePostFunc() {
	guarded := &http.Client{} // svcd passes its egress-guarded client here
	settings := map[string]string{
		"mail.transport":    "http",
		"mail.http.url":     "https://mail-relay.example/send",
		"mail.http.api_key": "key",
		"mail.from":         "Acme <no-reply@acme.test>",
	}
	cfg, err := mail.FromSettings(func(k string) string { return settings[k] })
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg.HTTP.Post = postWith(guarded)
	sender, err := mail.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	content, _ := mail.PasswordResetEmail(mail.Input{AppName: "Acme", AppURL: "https://acme.test", Token: "t0k"})
	_ = sender.Send(context.Background(), content.To("ada@example.test"))
}
