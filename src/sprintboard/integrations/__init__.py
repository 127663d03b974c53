"""Code (contract §20): GitHub, GitLab and Gitea integrations, the hooks they send, and the
pull requests and commits those link to work items."""
