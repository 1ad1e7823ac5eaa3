// Replaced by the queue example on the DownloadManager facade.
print("peregrine-queue: not built yet")
