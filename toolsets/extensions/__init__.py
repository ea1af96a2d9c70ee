"""What a deployment adds to the profiles: plugins, the workspace, progressive exposure."""
