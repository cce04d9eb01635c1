package baton

// What an administrator does to other clients' sessions: ends one, or
// takes one grant from it. Both need a certificate with the admin role
// (ErrPerm otherwise) and act in no session of the caller's.

import (
	"context"
	"fmt"
)

// Revoke ends session `session` at once, as its expiry would: its locks
// are released (after the cluster's lock-delay, and the session's own)
// and its waits end. ErrExpired, ErrClosed or ErrNoSession: it had ended.
func (c *Client) Revoke(ctx context.Context, session uint64) error {
	_, err := c.command(ctx, cmdRevoke(session),
		fmt.Sprintf("revoke session %d", session), nil)
	return err
}

// RevokeLock takes the grant `token` of `name` away from session
// `session`, which lives on (its holder's lock Context ends with
// ErrRevoked at its next keepalive). ErrNotHolder: that session holds no
// such grant.
func (c *Client) RevokeLock(ctx context.Context, name string, session,
	token uint64) error {
	if err := checkName(name); err != nil {
		return err
	}
	_, err := c.command(ctx, cmdRevokeLock(session, token, name),
		fmt.Sprintf("revoke grant %d of %s", token, name), nil)
	return err
}
